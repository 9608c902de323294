//! A Python file's definitions, read with tree-sitter-python: classes, functions (async,
//! decorated, nested), and module- and class-level assignments, each with its qualified name
//! and the byte spans of the roles of docs/selectors.md#roles (`def` name, `sig` header,
//! `body`, `doc`).
//!
//! Byte offsets throughout; the parser is [`super::grammars`]'.

use crate::selector::SegmentKind;
use tree_sitter::{Node, Tree};

/// Parse Python source. `None` only if the grammar cannot be loaded (an ABI mismatch).
pub fn parse(text: &str) -> Option<Tree> {
    super::grammars::parse(super::grammars::Grammar::Python, text)
}

pub type Span = (usize, usize);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefKind {
    Class,
    Function,
    Variable,
}

impl DefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DefKind::Class => "class",
            DefKind::Function => "function",
            DefKind::Variable => "variable",
        }
    }

    pub fn segment(self) -> SegmentKind {
        match self {
            DefKind::Class => SegmentKind::Class,
            DefKind::Function => SegmentKind::Def,
            DefKind::Variable => SegmentKind::Assign,
        }
    }
}

/// One definition.
#[derive(Debug, Clone)]
pub struct Def {
    /// Names from the module down (`["Square", "Corner", "__init__"]`).
    pub qual: Vec<String>,
    /// The kind of each level of `qual`.
    pub chain: Vec<SegmentKind>,
    pub kind: DefKind,
    /// The whole construct, decorators included.
    pub node: Span,
    pub name: Span,
    pub sig: Span,
    pub body: Option<Span>,
    pub doc: Option<Span>,
    /// Decorator expressions without the `@` (`property`, `name.setter`, `overload`).
    pub decorators: Vec<String>,
    /// Signature shape: `def(self,*args,k=)`, `async def(…)`, `class`, `var`.
    pub shape: String,
}

impl Def {
    pub fn qualname(&self) -> String {
        self.qual.join(".")
    }

    pub fn is_overload(&self) -> bool {
        self.decorators
            .iter()
            .any(|d| d == "overload" || d.ends_with(".overload"))
    }

    pub fn is_property(&self) -> bool {
        self.decorators
            .iter()
            .any(|d| d == "property" || d.ends_with(".cached_property") || d == "cached_property")
    }

    /// `@x.setter` / `@x.deleter` / `@x.getter` of this def's own name.
    pub fn is_accessor(&self) -> bool {
        let last = self.qual.last().map(String::as_str).unwrap_or("");
        self.decorators.iter().any(|d| {
            d.strip_prefix(last)
                .is_some_and(|r| matches!(r, ".setter" | ".deleter" | ".getter"))
        })
    }
}

/// Every definition of a parsed file, in document order.
pub fn definitions(tree: &Tree, text: &str) -> Vec<Def> {
    let mut out = Vec::new();
    walk_block(tree.root_node(), text, &[], &[], true, &mut out);
    out
}

/// Statement kinds whose blocks belong to the enclosing scope.
const COMPOUND: &[&str] = &[
    "if_statement",
    "elif_clause",
    "else_clause",
    "try_statement",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "with_statement",
    "for_statement",
    "while_statement",
    "block",
];

fn walk_block(
    node: Node,
    text: &str,
    qual: &[String],
    chain: &[SegmentKind],
    assignments: bool,
    out: &mut Vec<Def>,
) {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    for (i, child) in children.iter().enumerate() {
        match child.kind() {
            "function_definition" | "class_definition" => {
                definition(*child, *child, vec![], text, qual, chain, out)
            }
            "decorated_definition" => {
                let Some(def) = child.child_by_field_name("definition") else {
                    continue;
                };
                let mut c = child.walk();
                let decorators = child
                    .named_children(&mut c)
                    .filter(|d| d.kind() == "decorator")
                    .map(|d| {
                        let t = &text[d.start_byte()..d.end_byte()];
                        let t = t.trim_start_matches('@').trim();
                        t.split('(').next().unwrap_or(t).trim().to_string()
                    })
                    .collect();
                definition(def, *child, decorators, text, qual, chain, out)
            }
            "expression_statement" if assignments => {
                let doc = children.get(i + 1).and_then(|n| docstring_stmt(*n));
                assignment(*child, doc, text, qual, chain, out)
            }
            k if COMPOUND.contains(&k) => walk_block(*child, text, qual, chain, assignments, out),
            _ => {}
        }
    }
}

fn span(n: Node) -> Span {
    (n.start_byte(), n.end_byte())
}

/// The string literal of a docstring statement.
fn docstring_stmt(stmt: Node) -> Option<Span> {
    if stmt.kind() != "expression_statement" || stmt.named_child_count() != 1 {
        return None;
    }
    let s = stmt.named_child(0)?;
    matches!(s.kind(), "string" | "concatenated_string").then(|| span(s))
}

fn definition(
    def: Node,
    outer: Node,
    decorators: Vec<String>,
    text: &str,
    qual: &[String],
    chain: &[SegmentKind],
    out: &mut Vec<Def>,
) {
    let Some(name) = def.child_by_field_name("name") else {
        return;
    };
    let body = def.child_by_field_name("body");
    let kind = if def.kind() == "class_definition" {
        DefKind::Class
    } else {
        DefKind::Function
    };
    // The header ends at the last ':' before the body.
    let mut c = def.walk();
    let colon = def
        .children(&mut c)
        .filter(|n| n.kind() == ":" && body.is_none_or(|b| n.end_byte() <= b.start_byte()))
        .last();
    let sig_end = colon.map(|n| n.end_byte()).unwrap_or(def.end_byte());
    let doc = body.and_then(|b| b.named_child(0)).and_then(docstring_stmt);
    let shape = match kind {
        DefKind::Class => "class".to_string(),
        _ => {
            let is_async = text[def.start_byte()..name.start_byte()].contains("async");
            let params = def
                .child_by_field_name("parameters")
                .map(|p| param_shape(p, text))
                .unwrap_or_default();
            format!("{}def({params})", if is_async { "async " } else { "" })
        }
    };
    let mut q = qual.to_vec();
    q.push(text[name.start_byte()..name.end_byte()].to_string());
    let mut ch = chain.to_vec();
    ch.push(kind.segment());
    out.push(Def {
        qual: q.clone(),
        chain: ch.clone(),
        kind,
        node: span(outer),
        name: span(name),
        sig: (def.start_byte(), sig_end),
        body: body.map(span),
        doc,
        decorators,
        shape,
    });
    if let Some(b) = body {
        // Class bodies hold class-level assignments; function bodies only nested defs.
        walk_block(b, text, &q, &ch, kind == DefKind::Class, out);
    }
}

/// `a,b=,*args,k=,**kw` with `*` and `/` separators: names and default markers, no types.
fn param_shape(params: Node, text: &str) -> String {
    let mut c = params.walk();
    let parts: Vec<String> = params
        .named_children(&mut c)
        .map(|p| {
            let t = |n: Node| text[n.start_byte()..n.end_byte()].to_string();
            let name = p
                .child_by_field_name("name")
                .or_else(|| first_identifier(p))
                .map(t)
                .unwrap_or_default();
            match p.kind() {
                "default_parameter" | "typed_default_parameter" => format!("{name}="),
                "list_splat_pattern" => format!("*{name}"),
                "dictionary_splat_pattern" => format!("**{name}"),
                "keyword_separator" => "*".into(),
                "positional_separator" => "/".into(),
                "typed_parameter" => {
                    let raw = t(p);
                    let prefix = if raw.starts_with("**") {
                        "**"
                    } else if raw.starts_with('*') {
                        "*"
                    } else {
                        ""
                    };
                    format!("{prefix}{name}")
                }
                _ => name,
            }
        })
        .collect();
    parts.join(",")
}

fn first_identifier(n: Node) -> Option<Node> {
    if n.kind() == "identifier" {
        return Some(n);
    }
    let mut c = n.walk();
    let kids: Vec<Node> = n.named_children(&mut c).collect();
    kids.into_iter().find_map(first_identifier)
}

/// `x = …`, `x: T = …`, `a, b = …`, `a = b = …` at module or class level: one Def per name.
fn assignment(
    stmt: Node,
    doc: Option<Span>,
    text: &str,
    qual: &[String],
    chain: &[SegmentKind],
    out: &mut Vec<Def>,
) {
    let Some(mut a) = stmt.named_child(0).filter(|n| n.kind() == "assignment") else {
        return;
    };
    loop {
        let Some(left) = a.child_by_field_name("left") else {
            return;
        };
        let names: Vec<Node> = match left.kind() {
            "identifier" => vec![left],
            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                let mut c = left.walk();
                let v: Vec<Node> = left
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "identifier")
                    .collect();
                v
            }
            _ => vec![],
        };
        let right = a.child_by_field_name("right");
        let sig_end = a
            .child_by_field_name("type")
            .map(|t| t.end_byte())
            .unwrap_or(left.end_byte());
        for n in names {
            let mut q = qual.to_vec();
            q.push(text[n.start_byte()..n.end_byte()].to_string());
            let mut ch = chain.to_vec();
            ch.push(SegmentKind::Assign);
            out.push(Def {
                qual: q,
                chain: ch,
                kind: DefKind::Variable,
                node: span(stmt),
                name: span(n),
                sig: (a.start_byte(), sig_end),
                body: right.map(span),
                doc,
                decorators: vec![],
                shape: "var".into(),
            });
        }
        // `a = b = 1`: the right side is another assignment.
        match right.filter(|r| r.kind() == "assignment") {
            Some(r) => a = r,
            None => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(src: &str) -> Vec<Def> {
        definitions(&parse(src).expect("grammar loads"), src)
    }

    fn get<'a>(ds: &'a [Def], q: &str) -> Vec<&'a Def> {
        ds.iter().filter(|d| d.qualname() == q).collect()
    }

    #[test]
    fn qualnames_roles_and_shapes() {
        let src = "\
X: int = 1
\"\"\"Doc of X.\"\"\"
a, b = c = 2

class C(Base):
    \"\"\"Doc.\"\"\"
    K = 3

    @property
    def p(self) -> int:
        return 1

    @p.setter
    def p(self, v): ...

    async def run(self, x, *args, k=1, **kw):
        def inner(): pass
        local = 5

if True:
    def cond(a, /, b, *, c): pass
";
        let ds = defs(src);
        let names: Vec<String> = ds.iter().map(Def::qualname).collect();
        assert_eq!(
            names,
            [
                "X",
                "a",
                "b",
                "c",
                "C",
                "C.K",
                "C.p",
                "C.p",
                "C.run",
                "C.run.inner",
                "cond"
            ]
        );
        let t = |s: Span| &src[s.0..s.1];
        let x = get(&ds, "X")[0];
        assert_eq!(t(x.sig), "X: int");
        assert_eq!(t(x.body.unwrap()), "1");
        assert_eq!(t(x.doc.unwrap()), "\"\"\"Doc of X.\"\"\"");
        let c = get(&ds, "C")[0];
        assert_eq!(t(c.sig), "class C(Base):");
        assert_eq!(t(c.doc.unwrap()), "\"\"\"Doc.\"\"\"");
        let p = get(&ds, "C.p");
        assert!(p[0].is_property() && !p[0].is_accessor());
        assert!(p[1].is_accessor());
        assert_eq!(t(p[0].node).lines().next(), Some("@property"));
        let run = get(&ds, "C.run")[0];
        assert_eq!(t(run.sig), "async def run(self, x, *args, k=1, **kw):");
        assert_eq!(run.shape, "async def(self,x,*args,k=,**kw)");
        assert_eq!(get(&ds, "cond")[0].shape, "def(a,/,b,*,c)");
        assert_eq!(
            get(&ds, "C.run.inner")[0].chain,
            [SegmentKind::Class, SegmentKind::Def, SegmentKind::Def]
        );
        // No local variables of functions.
        assert!(get(&ds, "C.run.local").is_empty());
    }
}
