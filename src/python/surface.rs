//! A Python module's surface, read syntactically with tree-sitter: its top-level statements
//! with the bodies of functions left out — decorators, signatures (annotations, defaults),
//! class bases and class-level statements, assignments, imports, `__all__` — each normalized
//! to its syntax tree's shape (comments and docstrings dropped, indentation kept as nesting).
//! Each function body is kept apart, normalized the same way, with how its type can reach an
//! importer ([`Body::leak`]): through the return type a function without a declared one infers
//! from its body ([`Leak::Inferred`]: the server can tell whether it changed), or beyond what a
//! server reports of the function — a method that assigns attributes of its first parameter
//! (instance and class attributes are declared there), a protocol's stub body, a body with a
//! `global` statement ([`Leak::Yes`]).
//!
//! [`super::reach`] compares two surfaces of a module to tell which names an importer may see
//! changed.

use std::collections::BTreeSet;
use tree_sitter::{Node, Parser};

/// What kind of top-level statement: what its change means to an importer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `def` or `class` (decorated or not).
    Definition,
    /// An assignment (`=`, augmented, annotated) or a `type` alias.
    Assignment,
    /// `import …` or `from … import names`.
    Import,
    /// `from … import *`: its names are another module's.
    StarImport,
    /// Anything else: an expression (a call, with its side effects), a compound statement
    /// (`if`, `try`, `with`, `for`, …), `del`, `global`, a `__future__` import.
    Other,
}

/// How a function body can change a type an importer sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leak {
    /// It cannot: the return type is declared, and nothing else of the body is visible.
    No,
    /// Only through the return type inferred from it (no declared one), which the server
    /// reports for the function's name.
    Inferred,
    /// In ways the function's own type does not show (attributes of `self`, `global`, a stub
    /// body that makes a member unimplemented).
    Yes,
}

/// One function body inside a top-level statement (bodies nested in it are part of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// The body's normalized shape.
    pub shape: String,
    /// How the body can change a type an importer sees.
    pub leak: Leak,
    /// The function's name and the byte offset of that name in the module's text.
    pub name: String,
    pub name_at: usize,
    /// Whether Pyright may infer its return type again at each call site, from the arguments
    /// ([`per_call`]), so that a hover of the function does not show what a caller gets.
    pub per_call: bool,
    /// The names in the body (identifiers, attribute names among them, and words inside its
    /// strings).
    pub names: BTreeSet<String>,
}

/// One top-level statement of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub kind: Kind,
    /// Its normalized shape, each function body replaced by a placeholder.
    pub shape: String,
    /// The names it may bind at module level (for [`Kind::Other`]: every name in it).
    pub binds: BTreeSet<String>,
    /// The names its visible types may depend on: those of its shape (and words inside its
    /// strings, for string annotations), and those of its leaking bodies.
    pub uses: BTreeSet<String>,
    /// The names of its shape alone (its function bodies left out).
    pub own: BTreeSet<String>,
    /// Whether it is a class definition (decorated or not).
    pub class: bool,
    /// Its function bodies, in order.
    pub bodies: Vec<Body>,
}

/// A module's top-level statements, or `None` when the text does not parse cleanly. The last
/// few texts read are kept: a check reads each changed module's two texts twice (for the
/// functions whose inferred types to ask, then for its reach), Django's 2,500-line modules in
/// tens of milliseconds each time.
pub fn statements(text: &str) -> Option<Vec<Statement>> {
    type Kept = Vec<(String, Option<Vec<Statement>>)>;
    static KEPT: std::sync::OnceLock<std::sync::Mutex<Kept>> = std::sync::OnceLock::new();
    const KEEP: usize = 4;
    let kept = KEPT.get_or_init(Default::default);
    if let Some((_, found)) = kept.lock().ok()?.iter().find(|(t, _)| t == text) {
        return found.clone();
    }
    let found = read_statements(text);
    if let Ok(mut k) = kept.lock() {
        if k.len() >= KEEP {
            k.remove(0);
        }
        k.push((text.to_string(), found.clone()));
    }
    found
}

/// `text` parsed, or `None` when it does not parse cleanly.
pub(super) fn parse_clean(text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    parser
        .parse(text, None)
        .filter(|t| !t.root_node().has_error())
}

fn read_statements(text: &str) -> Option<Vec<Statement>> {
    let tree = parse_clean(text)?;
    let root = tree.root_node();
    let src = text.as_bytes();
    let mut cursor = root.walk();
    let out = root
        .named_children(&mut cursor)
        .filter(|n| !skipped(*n))
        .map(|n| statement(n, src))
        .collect();
    Some(out)
}

/// A comment, or a statement that is only a plain string (a docstring).
fn skipped(n: Node) -> bool {
    if n.is_extra() || n.kind() == "comment" {
        return true;
    }
    if n.kind() != "expression_statement" || n.named_child_count() != 1 {
        return false;
    }
    n.named_child(0).is_some_and(plain_string)
}

/// A string literal without interpolation (or a concatenation of such).
fn plain_string(n: Node) -> bool {
    match n.kind() {
        "string" => {
            let mut cursor = n.walk();
            let interpolated = n
                .named_children(&mut cursor)
                .any(|c| c.kind() == "interpolation");
            !interpolated
        }
        "concatenated_string" => {
            let mut cursor = n.walk();
            let all = n.named_children(&mut cursor).all(plain_string);
            all
        }
        _ => false,
    }
}

/// Read one top-level statement.
fn statement(n: Node, src: &[u8]) -> Statement {
    let kind = kind_of(n);
    let mut walk = Walk {
        src,
        shape: String::new(),
        uses: BTreeSet::new(),
        defined: BTreeSet::new(),
        bodies: Vec::new(),
    };
    walk.node(n, false);
    let binds = match kind {
        Kind::Other => walk.uses.union(&walk.defined).cloned().collect(),
        _ => {
            let mut b = binds(n, src);
            walrus_targets(n, src, &mut b);
            b
        }
    };
    let own = walk.uses.clone();
    let mut uses = walk.uses;
    for f in &walk.bodies {
        if f.leak != Leak::No || kind == Kind::Other {
            uses.extend(f.names.iter().cloned());
        }
    }
    let class = n.kind() == "class_definition"
        || n.child_by_field_name("definition")
            .is_some_and(|d| d.kind() == "class_definition");
    Statement {
        kind,
        shape: walk.shape,
        binds,
        uses,
        own,
        class,
        bodies: walk.bodies,
    }
}

fn kind_of(n: Node) -> Kind {
    match n.kind() {
        "function_definition" | "class_definition" | "decorated_definition" => Kind::Definition,
        "type_alias_statement" => Kind::Assignment,
        "import_statement" => Kind::Import,
        "import_from_statement" => {
            let mut cursor = n.walk();
            let star = n
                .children(&mut cursor)
                .any(|c| c.kind() == "wildcard_import");
            if star {
                Kind::StarImport
            } else {
                Kind::Import
            }
        }
        "expression_statement" => {
            let mut cursor = n.walk();
            let kids: Vec<Node> = n.named_children(&mut cursor).collect();
            match kids.as_slice() {
                [one] if matches!(one.kind(), "assignment" | "augmented_assignment") => {
                    Kind::Assignment
                }
                _ => Kind::Other,
            }
        }
        _ => Kind::Other,
    }
}

/// The names a definition, an assignment or an import binds.
fn binds(n: Node, src: &[u8]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match n.kind() {
        "decorated_definition" => {
            if let Some(d) = n.child_by_field_name("definition") {
                return binds(d, src);
            }
        }
        "function_definition" | "class_definition" => {
            if let Some(name) = n.child_by_field_name("name") {
                out.insert(text(name, src));
            }
        }
        "expression_statement" => {
            let mut cursor = n.walk();
            for c in n.named_children(&mut cursor) {
                targets(c, src, &mut out);
            }
        }
        "type_alias_statement" => {
            if let Some(left) = n.named_child(0) {
                identifiers(left, src, &mut out);
            }
        }
        "import_statement" | "import_from_statement" => {
            let mut cursor = n.walk();
            for c in n.children_by_field_name("name", &mut cursor) {
                let bound = match c.kind() {
                    "aliased_import" => c.child_by_field_name("alias"),
                    _ => c.named_child(0),
                };
                if let Some(b) = bound {
                    out.insert(text(b, src));
                }
            }
        }
        _ => identifiers(n, src, &mut out),
    }
    out
}

/// The names `:=` binds in the statement's scope (in a comprehension too; not in a function
/// body or a lambda).
fn walrus_targets(n: Node, src: &[u8], out: &mut BTreeSet<String>) {
    if n.kind() == "named_expression" {
        if let Some(name) = n.child_by_field_name("name") {
            out.insert(text(name, src));
        }
    }
    let body = match n.kind() {
        "function_definition" | "lambda" => n.child_by_field_name("body"),
        _ => None,
    };
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        if Some(c) != body {
            walrus_targets(c, src, out);
        }
    }
}

/// The names on the left of an assignment (through chained `a = b = …`).
fn targets(n: Node, src: &[u8], out: &mut BTreeSet<String>) {
    if !matches!(n.kind(), "assignment" | "augmented_assignment") {
        return;
    }
    if let Some(left) = n.child_by_field_name("left") {
        identifiers(left, src, out);
    }
    if let Some(right) = n.child_by_field_name("right") {
        targets(right, src, out);
    }
}

/// Every identifier under `n`.
pub(super) fn identifiers(n: Node, src: &[u8], out: &mut BTreeSet<String>) {
    if n.kind() == "identifier" {
        out.insert(text(n, src));
        return;
    }
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        identifiers(c, src, out);
    }
}

fn text(n: Node, src: &[u8]) -> String {
    n.utf8_text(src).unwrap_or_default().to_string()
}

/// The walk over one top-level statement: its shape (bodies elided), its names, its bodies.
struct Walk<'a> {
    src: &'a [u8],
    shape: String,
    uses: BTreeSet<String>,
    /// The names `def` and `class` bind.
    defined: BTreeSet<String>,
    bodies: Vec<Body>,
}

impl Walk<'_> {
    /// Append `n`'s shape; `in_class` when `n` is directly in a class body.
    fn node(&mut self, n: Node, in_class: bool) {
        if skipped(n) {
            return;
        }
        if n.kind() == "function_definition" {
            return self.function(n, in_class);
        }
        if n.child_count() == 0 {
            leaf(n, self.src, &mut self.shape, &mut self.uses);
            return;
        }
        self.shape.push('(');
        self.shape.push_str(n.kind());
        // Every function under a class (outside a body) is read as a method.
        let in_class = in_class || n.kind() == "class_definition";
        let name = match n.kind() {
            "class_definition" => n.child_by_field_name("name"),
            _ => None,
        };
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            if Some(c) == name {
                self.bound_name(c);
            } else if binding(n, c) {
                self.word(c);
            } else {
                self.node(c, in_class);
            }
        }
        self.shape.push(')');
    }

    /// The name a `def` or `class` binds: in the shape, but no use of a name.
    fn bound_name(&mut self, n: Node) {
        self.word(n);
        self.defined.insert(text(n, self.src));
    }

    /// `n`'s text into the shape, and nowhere else.
    fn word(&mut self, n: Node) {
        self.shape.push(' ');
        self.shape
            .push_str(n.utf8_text(self.src).unwrap_or_default());
    }

    /// A function: its signature into the shape, its body apart.
    fn function(&mut self, n: Node, method: bool) {
        self.shape.push_str("(function_definition");
        let body = n.child_by_field_name("body");
        let name = n.child_by_field_name("name");
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            if Some(c) == body {
                self.shape.push_str(" ⋯");
            } else if Some(c) == name {
                self.bound_name(c);
            } else {
                self.node(c, false);
            }
        }
        self.shape.push(')');
        let Some(body) = body else {
            return;
        };
        let mut shape = String::new();
        let mut names = BTreeSet::new();
        plain(body, self.src, &mut shape, &mut names);
        let leak = leak(n, body, method, self.src);
        let body = Body {
            shape,
            leak,
            name: name.map(|n| text(n, self.src)).unwrap_or_default(),
            name_at: name.map_or(n.start_byte(), |n| n.start_byte()),
            per_call: per_call(n, method),
            names,
        };
        self.bodies.push(body);
    }
}

/// A leaf's text into `shape`, and the names it carries into `names`.
fn leaf(n: Node, src: &[u8], shape: &mut String, names: &mut BTreeSet<String>) {
    let t = n.utf8_text(src).unwrap_or_default();
    shape.push(' ');
    shape.push_str(t);
    match n.kind() {
        "identifier" => {
            names.insert(t.to_string());
        }
        // A string annotation names types inside the string.
        "string_content" => names.extend(words(t)),
        _ => {}
    }
}

/// The identifier-like words of `t`.
pub fn words(t: &str) -> impl Iterator<Item = String> + '_ {
    t.split(|c: char| !(c == '_' || c.is_alphanumeric()))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c == '_' || c.is_alphabetic())
        })
        .map(str::to_string)
}

/// Whether `child` of `n` is a name that binds and looks nothing up: a parameter's name
/// (`def f(x, y=1, *a, z: int, **k)`, a lambda's) or a keyword argument's keyword
/// (`f(x=1)`, `class C(metaclass=M)`). In the shape, but no use of a module's name: a
/// parameter named like one shadows it, and a keyword binds a parameter of the callee.
/// [`super::uses`] reads importers by the same rule.
pub(super) fn binding(n: Node, child: Node) -> bool {
    if child.kind() != "identifier" {
        return false;
    }
    match n.kind() {
        "parameters" | "lambda_parameters" => true,
        // `*a` and `**k` as parameters (typed or not), not as patterns elsewhere.
        "list_splat_pattern" | "dictionary_splat_pattern" => n.parent().is_some_and(|p| {
            matches!(
                p.kind(),
                "parameters" | "lambda_parameters" | "typed_parameter"
            )
        }),
        "typed_parameter" => n.child_by_field_name("type") != Some(child),
        "default_parameter" | "typed_default_parameter" | "keyword_argument" => {
            n.child_by_field_name("name") == Some(child)
        }
        _ => false,
    }
}

/// The whole shape of `n` (nothing elided), comments and docstrings dropped.
fn plain(n: Node, src: &[u8], shape: &mut String, names: &mut BTreeSet<String>) {
    if skipped(n) {
        return;
    }
    if n.child_count() == 0 {
        return leaf(n, src, shape, names);
    }
    shape.push('(');
    shape.push_str(n.kind());
    let mut cursor = n.walk();
    for c in n.children(&mut cursor) {
        plain(c, src, shape, names);
    }
    shape.push(')');
}

/// Whether method `f` (a `def` in a class body) declares something beyond its own type: an
/// attribute of its first parameter, a `global`, or an unimplemented member (a stub body).
pub fn leaks_beyond(f: Node, src: &[u8]) -> bool {
    f.child_by_field_name("body")
        .is_some_and(|body| leak(f, body, true, src) == Leak::Yes)
}

/// How the body of function `f` can change a type outside it.
fn leak(f: Node, body: Node, method: bool, src: &[u8]) -> Leak {
    let name = f
        .child_by_field_name("name")
        .map(|n| text(n, src))
        .unwrap_or_default();
    let declared = f.child_by_field_name("return_type").is_some() || name == "__init__";
    if has_kind(body, "global_statement") {
        return Leak::Yes;
    }
    // A protocol's or an abstract base's member is unimplemented by a stub body.
    let beyond = method
        && (stub_body(body)
            || first_parameter(f, src).is_some_and(|p| assigns_attribute_of(body, &p, src)));
    match (beyond, declared) {
        (true, _) => Leak::Yes,
        (false, false) => Leak::Inferred,
        (false, true) => Leak::No,
    }
}

/// Whether Pyright may infer the return type of function `f` again at each call site: as read
/// in its evaluator (1.1.407), only for a function that is neither decorated nor `async` and
/// has a parameter whose type is unknown. Any parameter without an annotation counts (one with
/// a default too, though Pyright infers some from it), except a method's first (`self`, `cls`:
/// their types are synthesized).
fn per_call(f: Node, method: bool) -> bool {
    let decorated = f
        .parent()
        .is_some_and(|p| p.kind() == "decorated_definition");
    let is_async = f.child(0).is_some_and(|c| c.kind() == "async");
    if decorated || is_async {
        return false;
    }
    let Some(params) = f.child_by_field_name("parameters") else {
        return false;
    };
    let mut cursor = params.walk();
    let unannotated = params
        .named_children(&mut cursor)
        .filter(|p| !matches!(p.kind(), "keyword_separator" | "positional_separator"))
        .skip(usize::from(method))
        .any(|p| !matches!(p.kind(), "typed_parameter" | "typed_default_parameter"));
    unannotated
}

/// Whether `body` is only `...`, `pass` or a `raise` (docstrings and comments aside).
fn stub_body(body: Node) -> bool {
    let mut cursor = body.walk();
    let kept: Vec<Node> = body
        .named_children(&mut cursor)
        .filter(|c| !skipped(*c))
        .collect();
    match kept.as_slice() {
        [] => true,
        [one] => match one.kind() {
            "pass_statement" | "raise_statement" => true,
            "expression_statement" => one.named_child(0).is_some_and(|e| e.kind() == "ellipsis"),
            _ => false,
        },
        _ => false,
    }
}

fn has_kind(n: Node, kind: &str) -> bool {
    if n.kind() == kind {
        return true;
    }
    let mut cursor = n.walk();
    let found = n.named_children(&mut cursor).any(|c| has_kind(c, kind));
    found
}

/// The name of `f`'s first parameter (`self`, `cls`).
fn first_parameter(f: Node, src: &[u8]) -> Option<String> {
    let params = f.child_by_field_name("parameters")?;
    let first = params.named_child(0)?;
    let id = match first.kind() {
        "identifier" => first,
        _ => first.named_child(0).filter(|c| c.kind() == "identifier")?,
    };
    Some(text(id, src))
}

/// Whether some assignment, `for` or `with` target under `n` is an attribute of `p`.
fn assigns_attribute_of(n: Node, p: &str, src: &[u8]) -> bool {
    let target = match n.kind() {
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
            n.child_by_field_name("left")
        }
        "as_pattern" => n.child_by_field_name("alias"),
        _ => None,
    };
    if target.is_some_and(|t| attribute_of(t, p, src)) {
        return true;
    }
    let mut cursor = n.walk();
    let found = n
        .named_children(&mut cursor)
        .any(|c| assigns_attribute_of(c, p, src));
    found
}

/// Whether `n` holds an attribute `p.x`.
fn attribute_of(n: Node, p: &str, src: &[u8]) -> bool {
    if n.kind() == "attribute"
        && n.child_by_field_name("object")
            .is_some_and(|o| o.kind() == "identifier" && text(o, src) == p)
    {
        return true;
    }
    let mut cursor = n.walk();
    let found = n
        .named_children(&mut cursor)
        .any(|c| attribute_of(c, p, src));
    found
}
