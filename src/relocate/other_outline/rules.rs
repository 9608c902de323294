//! Each grammar's rules: which node kinds declare what, under which name, with which body
//! and members (the node kinds and fields of the pinned grammar crates).

use super::{field, named_children, Cx, Found, Level};
use crate::relocate::outline::{DefKind, Span};
use tree_sitter::Node;

const CLASS: DefKind = DefKind::Class;
const FUNCTION: DefKind = DefKind::Function;
const VARIABLE: DefKind = DefKind::Variable;

/// What a C declarator declares: scopes, name, function declarator.
type Declared<'t> = (Vec<String>, (String, Span), Option<Node<'t>>);

/// Nesting of C declarators read for a name.
const MAX_DECLARATOR_DEPTH: usize = 32;

impl Cx<'_> {
    pub(super) fn names(&self, n: Option<Node>) -> Vec<(String, Span)> {
        self.name(n).into_iter().collect()
    }

    /// Every child of `n` in field `f` that is a name.
    fn all_named(&self, n: Node, f: &str) -> Vec<(String, Span)> {
        let mut c = n.walk();
        let v: Vec<(String, Span)> = n
            .children_by_field_name(f, &mut c)
            .filter_map(|x| self.name(Some(x)))
            .collect();
        v
    }

    /// TypeScript, TSX and JavaScript.
    pub(super) fn script<'t>(&self, n: Node<'t>, level: Level) -> Vec<Found<'t>> {
        let name = field(n, "name");
        let body = field(n, "body");
        let f = match n.kind() {
            "class_declaration"
            | "abstract_class_declaration"
            | "class"
            | "interface_declaration"
            | "enum_declaration"
            | "internal_module"
            | "module" => Found::new(CLASS, self.names(name)).body(body).members(body),
            "type_alias_declaration" => Found::new(CLASS, self.names(name)).body(field(n, "value")),
            "function_declaration"
            | "generator_function_declaration"
            | "function_signature"
            | "method_signature"
            | "abstract_method_signature" => Found::new(FUNCTION, self.names(name))
                .body(body)
                .members(body)
                .params(field(n, "parameters")),
            "method_definition" => {
                let mut c = n.walk();
                let setter = n.children(&mut c).any(|k| k.kind() == "set");
                let mut f = Found::new(FUNCTION, self.names(name))
                    .body(body)
                    .members(body)
                    .params(field(n, "parameters"));
                f.setter = setter;
                f
            }
            "public_field_definition" | "property_signature" => {
                Found::new(VARIABLE, self.names(name)).body(field(n, "value"))
            }
            "field_definition" => {
                Found::new(VARIABLE, self.names(field(n, "property"))).body(field(n, "value"))
            }
            "enum_assignment" => Found::new(VARIABLE, self.names(name)).body(field(n, "value")),
            "property_identifier" if n.parent().is_some_and(|p| p.kind() == "enum_body") => {
                Found::new(VARIABLE, self.names(Some(n)))
            }
            "lexical_declaration" | "variable_declaration" => return self.declarators(n, level),
            _ => return vec![],
        };
        vec![f]
    }

    /// `const a = 1, f = () => …`: a variable each, a function when its value is one.
    fn declarators<'t>(&self, n: Node<'t>, level: Level) -> Vec<Found<'t>> {
        let decls: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|d| d.kind() == "variable_declarator")
            .collect();
        let several = decls.len() > 1;
        let mut out = vec![];
        for d in decls {
            let value = field(d, "value");
            let func = value.filter(|v| {
                matches!(
                    v.kind(),
                    "arrow_function" | "function_expression" | "function" | "generator_function"
                )
            });
            let mut f = match func {
                Some(v) => Found::new(FUNCTION, self.names(field(d, "name")))
                    .body(field(v, "body"))
                    .members(field(v, "body"))
                    .params(field(v, "parameters").or_else(|| field(v, "parameter"))),
                None if level == Level::Function => continue,
                None => Found::new(VARIABLE, self.names(field(d, "name"))).body(value),
            };
            if several {
                f.node = Some((d.start_byte(), d.end_byte()));
            }
            out.push(f);
        }
        out
    }

    pub(super) fn go<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let name = field(n, "name");
        let body = field(n, "body");
        let f = match n.kind() {
            "function_declaration" => Found::new(FUNCTION, self.names(name))
                .body(body)
                .members(body)
                .params(field(n, "parameters")),
            "method_declaration" => {
                let mut f = Found::new(FUNCTION, self.names(name))
                    .body(body)
                    .members(body)
                    .params(field(n, "parameters"));
                f.scope = self.go_receiver(n).into_iter().collect();
                f
            }
            "type_spec" | "type_alias" => {
                let ty = field(n, "type");
                let members = ty.and_then(|t| match t.kind() {
                    "struct_type" => named_children(t)
                        .into_iter()
                        .find(|c| c.kind() == "field_declaration_list"),
                    "interface_type" => Some(t),
                    _ => None,
                });
                Found::new(CLASS, self.names(name))
                    .body(ty)
                    .members(members)
            }
            "field_declaration" => Found::new(VARIABLE, self.all_named(n, "name")),
            "method_elem" => Found::new(FUNCTION, self.names(name)).params(field(n, "parameters")),
            "const_spec" | "var_spec" => {
                Found::new(VARIABLE, self.all_named(n, "name")).body(field(n, "value"))
            }
            _ => return vec![],
        };
        vec![f]
    }

    /// The type a Go method's receiver names: `Counter` of `(c *Counter[T])`.
    fn go_receiver(&self, n: Node) -> Option<String> {
        let param = named_children(field(n, "receiver")?)
            .into_iter()
            .find(|p| p.kind() == "parameter_declaration")?;
        let mut ty = field(param, "type")?;
        for _ in 0..4 {
            ty = match ty.kind() {
                "pointer_type" => named_children(ty).into_iter().next()?,
                "generic_type" => field(ty, "type")?,
                _ => break,
            };
        }
        self.name(Some(ty)).map(|(s, _)| s)
    }

    pub(super) fn rust<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let name = field(n, "name");
        let body = field(n, "body");
        let f = match n.kind() {
            "function_item" | "function_signature_item" => Found::new(FUNCTION, self.names(name))
                .body(body)
                .members(body)
                .params(field(n, "parameters")),
            "struct_item" | "union_item" | "enum_item" | "trait_item" | "mod_item" => {
                Found::new(CLASS, self.names(name)).body(body).members(body)
            }
            "type_item" => Found::new(CLASS, self.names(name)).body(field(n, "type")),
            "impl_item" => {
                let mut f = Found::new(CLASS, vec![]).members(body);
                f.emits = false;
                f.scope = self.rust_type_name(field(n, "type")).into_iter().collect();
                if f.scope.is_empty() {
                    return vec![];
                }
                f
            }
            "field_declaration" => Found::new(VARIABLE, self.names(name)),
            "enum_variant" => Found::new(VARIABLE, self.names(name)).body(body),
            "const_item" | "static_item" => {
                Found::new(VARIABLE, self.names(name)).body(field(n, "value"))
            }
            "macro_definition" => Found::new(FUNCTION, self.names(name)),
            _ => return vec![],
        };
        vec![f]
    }

    /// `Wrap` of `impl<T> Shape for Wrap<T>`, `Counter` of `impl a::Counter`.
    fn rust_type_name(&self, ty: Option<Node>) -> Option<String> {
        let mut ty = ty?;
        for _ in 0..4 {
            ty = match ty.kind() {
                "generic_type" => field(ty, "type")?,
                "scoped_type_identifier" => field(ty, "name")?,
                _ => break,
            };
        }
        self.name(Some(ty)).map(|(s, _)| s)
    }

    /// C and C++.
    pub(super) fn c<'t>(&self, n: Node<'t>, level: Level) -> Vec<Found<'t>> {
        let name = field(n, "name");
        let body = field(n, "body");
        let f = match n.kind() {
            "function_definition" => {
                let Some((scope, name, decl)) = self.declarator(field(n, "declarator"), 0) else {
                    return vec![];
                };
                let mut f = Found::new(FUNCTION, vec![name])
                    .body(body)
                    .members(body)
                    .params(decl.and_then(|d| field(d, "parameters")));
                f.scope = scope;
                f
            }
            "declaration" | "field_declaration" if level != Level::Function => {
                return self.c_declarators(n);
            }
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier"
                if body.is_some() =>
            {
                Found::new(CLASS, self.names(name)).body(body).members(body)
            }
            "type_definition" => {
                let ty = field(n, "type");
                let own = ty.and_then(|t| field(t, "name"));
                let inner = ty.and_then(|t| field(t, "body"));
                let alias = self
                    .declarator(field(n, "declarator"), 0)
                    .map(|(_, name, _)| name);
                let names = match (inner, own) {
                    (Some(_), Some(_)) => self.names(own),
                    _ => alias.into_iter().collect(),
                };
                Found::new(CLASS, names).body(inner).members(inner)
            }
            "namespace_definition" => Found::new(CLASS, self.names(name)).members(body),
            "enumerator" => Found::new(VARIABLE, self.names(name)).body(field(n, "value")),
            "preproc_def" => Found::new(VARIABLE, self.names(name)).body(field(n, "value")),
            "preproc_function_def" => {
                Found::new(FUNCTION, self.names(name)).params(field(n, "parameters"))
            }
            _ => return vec![],
        };
        vec![f]
    }

    /// `int a = 1, f(int);`: a variable, or a prototype (a function without a body), each.
    fn c_declarators<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        let several = decls.len() > 1;
        let mut out = vec![];
        for d in decls {
            let Some((scope, name, func)) = self.declarator(Some(d), 0) else {
                continue;
            };
            let mut f = match func {
                Some(fd) => Found::new(FUNCTION, vec![name]).params(field(fd, "parameters")),
                None => Found::new(VARIABLE, vec![name]).body(field(d, "value")),
            };
            f.scope = scope;
            if several {
                f.node = Some((d.start_byte(), d.end_byte()));
            }
            out.push(f);
        }
        out
    }

    /// The name a C declarator declares, the scopes of a C++ qualified name (`A::B::f`), and
    /// its function declarator when it declares a function.
    fn declarator<'t>(&self, d: Option<Node<'t>>, depth: usize) -> Option<Declared<'t>> {
        let d = d?;
        if depth > MAX_DECLARATOR_DEPTH {
            return None;
        }
        match d.kind() {
            "identifier" | "field_identifier" | "type_identifier" => {
                Some((vec![], self.name(Some(d))?, None))
            }
            "function_declarator" => {
                let (scope, name, _) = self.declarator(field(d, "declarator"), depth + 1)?;
                Some((scope, name, Some(d)))
            }
            "qualified_identifier" => {
                let scope = self.name(field(d, "scope"))?.0;
                let (mut rest, name, f) = self.declarator(field(d, "name"), depth + 1)?;
                rest.insert(0, scope);
                Some((rest, name, f))
            }
            "pointer_declarator"
            | "reference_declarator"
            | "init_declarator"
            | "array_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                let inner = field(d, "declarator").or_else(|| named_children(d).into_iter().next());
                self.declarator(inner, depth + 1)
            }
            _ => None,
        }
    }

    pub(super) fn bash<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let name = field(n, "name");
        let f = match n.kind() {
            "function_definition" => {
                let body = field(n, "body");
                Found::new(FUNCTION, self.names(name))
                    .body(body)
                    .members(body)
            }
            "variable_assignment" => Found::new(VARIABLE, self.names(name)).body(field(n, "value")),
            _ => return vec![],
        };
        vec![f]
    }
}
