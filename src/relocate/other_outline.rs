//! The definitions of a file in a language other than Python (TypeScript/JavaScript, Go, Rust,
//! C/C++, shell, PHP, CMake; the keys of JSON, YAML and TOML; HTML ids, CSS rules, Dockerfile
//! stages), read with its
//! tree-sitter grammar into the same [`Def`]s as Python's [`super::outline`], so `sym://` and
//! `ast://` selectors, durable selectors and relocation scoring work the same way in every
//! language:
//! - classes, interfaces, structs, enums, traits, type aliases, namespaces, modules → `class`;
//! - functions, methods, signatures, macros, `const f = () => …` → `def`;
//! - fields, enum members, top- and type-level variables and constants → `assign`;
//! - a key whose value is a mapping (a TOML table), an HTML element with an `id`, a CSS rule,
//!   a Dockerfile stage → `class`; any other key, a Dockerfile `ARG` or `ENV` → `assign`
//!   ([`keys`], [`web`], [`build`]).
//!
//! A method declared outside its type is named under it (a Go method under its receiver type,
//! a Rust `impl` member under the implemented type, C++ `A::f` under `A`). A name declared
//! twice keeps its definition over its prototype or signature, and a getter over its setter;
//! what is still twice is left to relocation, which reports it as ambiguous.
//!
//! The walk is bounded in depth ([`MAX_DEPTH`]): deeper definitions are not outlined, and a
//! hostile nesting cannot exhaust the stack.

use super::grammars::Grammar;
use super::outline::{Def, DefKind, Span};
use crate::selector::SegmentKind;
use std::collections::HashMap;
use tree_sitter::{Node, Tree};

/// Nesting levels the walk descends; definitions below are not outlined.
const MAX_DEPTH: usize = 200;

/// What a variable is where the walk is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Type,
    Function,
}

/// One construct a grammar's rules recognise.
struct Found<'t> {
    kind: DefKind,
    /// Each name it declares with its span (Go's `a, b int` declares two).
    names: Vec<(String, Span)>,
    /// Names it is qualified under besides the enclosing ones (a Go receiver, C++ `A::`).
    scope: Vec<String>,
    /// Its span when not the node's own (one declarator of several).
    node: Option<Span>,
    /// The role `body`: a block, a class body, a value.
    body: Option<Node<'t>>,
    /// The node whose children are its members.
    members: Option<Node<'t>>,
    params: Option<Node<'t>>,
    /// `set x()`: dropped when the getter is there.
    setter: bool,
    /// False for a construct that only qualifies its members (a Rust `impl`).
    emits: bool,
    /// Its `sig` when not the text before its body (an HTML start tag).
    head: Option<Span>,
    /// Its children are walked in the enclosing scope (HTML ids name elements flat).
    flat: bool,
}

impl<'t> Found<'t> {
    fn new(kind: DefKind, names: Vec<(String, Span)>) -> Self {
        Found {
            kind,
            names,
            scope: vec![],
            node: None,
            body: None,
            members: None,
            params: None,
            setter: false,
            emits: true,
            head: None,
            flat: false,
        }
    }

    fn body(mut self, n: Option<Node<'t>>) -> Self {
        self.body = n;
        self
    }

    fn members(mut self, n: Option<Node<'t>>) -> Self {
        self.members = n;
        self
    }

    fn params(mut self, n: Option<Node<'t>>) -> Self {
        self.params = n;
        self
    }
}

/// Every definition of a parsed file of grammar `g` (not Python), in document order.
pub fn definitions(g: Grammar, tree: &Tree, text: &str) -> Vec<Def> {
    let cx = Cx { g, text };
    let mut out = Vec::new();
    cx.walk(tree.root_node(), &Scope::default(), Level::Top, 0, &mut out);
    keep_definitions(out)
}

#[derive(Default, Clone)]
struct Scope {
    qual: Vec<String>,
    chain: Vec<SegmentKind>,
}

struct Cx<'a> {
    g: Grammar,
    text: &'a str,
}

fn span(n: Node) -> Span {
    (n.start_byte(), n.end_byte())
}

fn field<'t>(n: Node<'t>, name: &str) -> Option<Node<'t>> {
    n.child_by_field_name(name)
}

fn named_children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    let v: Vec<Node> = n.named_children(&mut c).collect();
    v
}

fn is_comment(n: Node) -> bool {
    n.kind().contains("comment")
}

/// Nodes that wrap one declaration: the declaration's span and doc comment are theirs.
const WRAPPERS: &[&str] = &[
    "export_statement",
    "ambient_declaration",
    "expression_statement",
    "template_declaration",
    "type_declaration",
    "const_declaration",
    "var_declaration",
    "declaration_command",
];

/// Nodes whose children belong to the enclosing scope (conditional compilation, `extern "C"`).
const CONTAINERS: &[&str] = &[
    "preproc_ifdef",
    "preproc_if",
    "preproc_else",
    "preproc_elif",
    "preproc_elifdef",
    "linkage_specification",
    "declaration_list",
    "field_declaration_list",
];

impl Cx<'_> {
    fn text(&self, n: Node) -> &str {
        &self.text[n.start_byte()..n.end_byte()]
    }

    /// `n`'s text when it is a name a selector can spell.
    fn name(&self, n: Option<Node>) -> Option<(String, Span)> {
        let n = n?;
        self.spelled(span(n))
    }

    /// The text at `s` when it is a name a selector can spell: an identifier, or in a
    /// language whose names are keys, ids or classes, one with `-` inside (`cert-file`).
    fn spelled(&self, s: Span) -> Option<(String, Span)> {
        let t = self.text.get(s.0..s.1)?;
        let dashes = self.g.names_are_keys();
        let mut chars = t.chars();
        let first = chars.next()?;
        let ok = (first == '_' || first == '$' || first.is_alphabetic())
            && chars.all(|c| c == '_' || c == '$' || c.is_alphanumeric() || (dashes && c == '-'));
        ok.then(|| (t.to_string(), s))
    }

    /// A statement that names what follows it in its file (PHP's `namespace A\B;`, a
    /// Dockerfile's `FROM … AS stage`): its definition is emitted and the scope of what
    /// follows returned, `base` being the scope of the file.
    fn scope_statement(
        &self,
        n: Node,
        base: &Scope,
        depth: usize,
        out: &mut Vec<Def>,
    ) -> Option<Scope> {
        match self.g {
            Grammar::Php => self.php_namespace_statement(n, base, depth, out),
            Grammar::Dockerfile => self.docker_stage(n, base, depth, out),
            _ => None,
        }
    }

    /// A node the walk reads through: its children belong to the enclosing scope.
    fn is_container(&self, kind: &str) -> bool {
        CONTAINERS.contains(&kind)
            || WRAPPERS.contains(&kind)
            || match self.g {
                Grammar::Json => kind == "object",
                Grammar::Yaml => matches!(
                    kind,
                    "document" | "block_node" | "block_mapping" | "flow_node" | "flow_mapping"
                ),
                Grammar::Html => matches!(kind, "element" | "template_element"),
                Grammar::Css => matches!(kind, "media_statement" | "supports_statement" | "block"),
                _ => false,
            }
    }

    fn walk(&self, node: Node, scope: &Scope, level: Level, depth: usize, out: &mut Vec<Def>) {
        if depth > MAX_DEPTH {
            return;
        }
        // A PHP `namespace A\B;` or a Dockerfile `FROM … AS stage` names what follows it.
        let base = scope;
        let mut own_scope;
        let mut scope = scope;
        for child in named_children(node) {
            if is_comment(child) {
                continue;
            }
            if let Some(inner) = self.scope_statement(child, base, depth, out) {
                own_scope = inner;
                scope = &own_scope;
                continue;
            }
            let kind = child.kind();
            if WRAPPERS.contains(&kind) {
                let inner = named_children(child);
                let single = inner.iter().filter(|n| !is_comment(**n)).count() == 1;
                let outer = single.then_some(child);
                self.walk_wrapped(child, outer, scope, level, depth + 1, out);
                continue;
            }
            self.visit(child, None, scope, level, depth, out);
        }
    }

    fn walk_wrapped(
        &self,
        wrapper: Node,
        outer: Option<Node>,
        scope: &Scope,
        level: Level,
        depth: usize,
        out: &mut Vec<Def>,
    ) {
        for child in named_children(wrapper) {
            if !is_comment(child) {
                self.visit(child, outer, scope, level, depth, out);
            }
        }
    }

    /// One child of a scope: a definition, a container to read through, or (inside a
    /// function) anything that may hold a nested definition.
    fn visit(
        &self,
        child: Node,
        outer: Option<Node>,
        scope: &Scope,
        level: Level,
        depth: usize,
        out: &mut Vec<Def>,
    ) {
        let found = self.classify(child, level);
        if found.is_empty() {
            if self.is_container(child.kind()) || level == Level::Function {
                self.walk(child, scope, level, depth + 1, out);
            }
            return;
        }
        for f in found {
            if level == Level::Function && f.kind == DefKind::Variable {
                continue;
            }
            self.emit(child, outer, f, scope, depth, out);
        }
    }

    fn emit(
        &self,
        child: Node,
        outer: Option<Node>,
        f: Found,
        scope: &Scope,
        depth: usize,
        out: &mut Vec<Def>,
    ) {
        let mut inner = scope.clone();
        for s in &f.scope {
            inner.qual.push(s.clone());
            inner.chain.push(SegmentKind::Class);
        }
        let whole = outer.unwrap_or(child);
        let node = f.node.unwrap_or(span(whole));
        let member_level = match f.kind {
            DefKind::Class => Level::Type,
            _ => Level::Function,
        };
        if !f.emits {
            if let Some(m) = f.members {
                self.walk(m, &inner, Level::Type, depth + 1, out);
            }
            return;
        }
        let flat = f.flat.then_some(child);
        let sig = match f.body {
            _ if f.head.is_some() => f.head.unwrap_or(node),
            Some(b) if b.start_byte() > child.start_byte() => {
                let head = &self.text[child.start_byte()..b.start_byte()];
                (
                    child.start_byte(),
                    child.start_byte() + head.trim_end().len(),
                )
            }
            _ => f.node.unwrap_or(span(child)),
        };
        let shape = match f.kind {
            DefKind::Class => "class".to_string(),
            DefKind::Variable => "var".to_string(),
            DefKind::Function => format!("fn({})", self.params_shape(f.params)),
        };
        let doc = self.doc_comment(whole);
        let single = f.names.len() == 1;
        for (name, name_span) in f.names {
            let mut qual = inner.qual.clone();
            qual.push(name);
            let mut chain = inner.chain.clone();
            chain.push(f.kind.segment());
            out.push(Def {
                qual: qual.clone(),
                chain: chain.clone(),
                kind: f.kind,
                node,
                name: name_span,
                sig,
                body: f.body.map(span),
                doc,
                decorators: if f.setter {
                    vec!["setter".into()]
                } else {
                    vec![]
                },
                shape: shape.clone(),
            });
            if let (true, Some(m)) = (single, f.members) {
                let members = Scope { qual, chain };
                self.walk(m, &members, member_level, depth + 1, out);
            }
        }
        if let Some(c) = flat {
            self.walk(c, scope, member_level, depth + 1, out);
        }
    }

    /// The parameters, whitespace removed: `fn(a:number,b?:string)`.
    fn params_shape(&self, params: Option<Node>) -> String {
        let Some(p) = params else {
            return String::new();
        };
        named_children(p)
            .into_iter()
            .filter(|n| !is_comment(*n))
            .map(|n| self.text(n).split_whitespace().collect::<String>())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The comments right above `n` (no blank line between; Rust attributes such as
    /// `#[derive]` may stand between them and `n`), as one span.
    fn doc_comment(&self, n: Node) -> Option<Span> {
        let (mut first, mut last): (Option<Node>, Option<Node>) = (None, None);
        let mut below = n;
        let mut prev = n.prev_sibling();
        while let Some(p) = prev {
            let gap = &self.text[p.end_byte()..below.start_byte()];
            if gap.matches('\n').count() > 1 || self.text(p).starts_with("#!") {
                break;
            }
            if is_comment(p) {
                first = Some(p);
                last = last.or(Some(p));
            } else if p.kind() != "attribute_item" || first.is_some() {
                break;
            }
            below = p;
            prev = p.prev_sibling();
        }
        Some((first?.start_byte(), last?.end_byte()))
    }

    fn classify<'t>(&self, n: Node<'t>, level: Level) -> Vec<Found<'t>> {
        let found = match self.g {
            Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript => self.script(n, level),
            Grammar::Go => self.go(n),
            Grammar::Rust => self.rust(n),
            Grammar::C | Grammar::Cpp => self.c(n, level),
            Grammar::Bash => self.bash(n),
            Grammar::Php => self.php(n),
            Grammar::Json | Grammar::Yaml | Grammar::Toml => self.key(n),
            Grammar::Html => self.html(n),
            Grammar::Css => self.css(n),
            Grammar::Dockerfile => self.dockerfile(n),
            Grammar::CMake => self.cmake(n),
            Grammar::Python => vec![],
        };
        found
            .into_iter()
            .filter(|f| !f.names.is_empty() || !f.emits)
            .collect()
    }
}

mod build;
mod keys;
mod rules;
mod web;

/// A definition's qualified name and kind chain.
type NameKey<'a> = (&'a [String], &'a [SegmentKind]);

/// A name declared twice keeps its definitions over prototypes and signatures (those
/// without a body), and a getter over its setter.
fn keep_definitions(defs: Vec<Def>) -> Vec<Def> {
    // Per name: (one has a body, one is not a setter).
    let mut seen: HashMap<NameKey, (bool, bool)> = HashMap::new();
    for d in &defs {
        let e = seen.entry((&d.qual, &d.chain)).or_default();
        e.0 |= d.body.is_some();
        e.1 |= d.decorators.is_empty();
    }
    let keep: Vec<bool> = defs
        .iter()
        .map(|d| {
            let (has_body, has_getter) = seen[&(&d.qual[..], &d.chain[..])];
            let prototype = d.kind == DefKind::Function && d.body.is_none() && has_body;
            let setter = !d.decorators.is_empty() && has_getter;
            !(prototype || setter)
        })
        .collect();
    defs.into_iter()
        .zip(keep)
        .filter_map(|(d, k)| k.then_some(d))
        .collect()
}

#[cfg(test)]
mod tests;
