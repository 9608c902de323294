//! The PositionSpec union and its canonical string form (docs/selectors.md#canonical-form).
//!
//! Printing is here; reading the string form is [`super::parser`]'s job. The canonical form is
//! what `resolution.original` records: `parse(spec.to_canonical()) == spec` for every spec the
//! parser produces (the string form leaves `indexing` to `--index-io`).

use crate::text::Encoding;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The structured selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum PositionSpec {
    /// `path@L42:C7`, or `path@L42:name#N` when `name` is given instead of `col`.
    Cursor {
        path: String,
        line: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        col: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        indexing: Option<Encoding>,
        #[serde(
            default,
            rename = "docVersion",
            skip_serializing_if = "Option::is_none"
        )]
        doc_version: Option<String>,
    },
    /// `path@R(42,7->44,1)`.
    Range {
        path: String,
        start: [u32; 2],
        end: [u32; 2],
        #[serde(default, skip_serializing_if = "Option::is_none")]
        indexing: Option<Encoding>,
        #[serde(
            default,
            rename = "docVersion",
            skip_serializing_if = "Option::is_none"
        )]
        doc_version: Option<String>,
    },
    /// `py://pkg.mod#Class.method:role?overload=N`.
    Symbol {
        /// Dotted module name (`pkg.mod`).
        module: String,
        /// Dotted qualified name inside the module (`Class.method`).
        qualname: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<Role>,
        /// 0-based index among the `@overload`-decorated definitions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overload: Option<u32>,
        #[serde(
            default,
            rename = "docVersion",
            skip_serializing_if = "Option::is_none"
        )]
        doc_version: Option<String>,
    },
    /// `sym://web/app.ts#Greeter.greet:role`: a definition named by its file and qualified name,
    /// in any language with an outline.
    Sym {
        path: String,
        /// Dotted qualified name inside the file (`Greeter.greet`, `Counter.Add`).
        qualname: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<Role>,
        #[serde(
            default,
            rename = "docVersion",
            skip_serializing_if = "Option::is_none"
        )]
        doc_version: Option<String>,
    },
    /// `ast://[module=pkg.mod]/[class=C]/[def=m]/name[1]`, or `ast://[file=web/app.ts]/…`.
    Ast {
        /// `[kind, name]` pairs, the first one a module or a file.
        path: Vec<AstSegment>,
        /// The trailing `nodekind[N]`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodePick>,
        #[serde(
            default,
            rename = "docVersion",
            skip_serializing_if = "Option::is_none"
        )]
        doc_version: Option<String>,
    },
    /// `anchor://path#"snippet"?ctx=24&hash=sha1:…`.
    Anchor {
        path: String,
        snippet: String,
        /// Characters of context on each side (default [`DEFAULT_CTX`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ctx: Option<u32>,
        /// `sha1:<hex>` of the original occurrence's context window.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hash: Option<String>,
        #[serde(
            default,
            rename = "docVersion",
            skip_serializing_if = "Option::is_none"
        )]
        doc_version: Option<String>,
    },
}

/// Context characters on each side of an anchor when `ctx` is not given.
pub const DEFAULT_CTX: u32 = 24;

/// Which part of a symbol a `py://` selector names (docs/selectors.md#roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The name token (the default).
    Def,
    /// From `def`/`class` through the `:` that ends the header.
    Sig,
    /// The block.
    Body,
    /// The docstring literal.
    Doc,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Def, Role::Sig, Role::Body, Role::Doc];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Def => "def",
            Role::Sig => "sig",
            Role::Body => "body",
            Role::Doc => "doc",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// The kind of one `ast://` path segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SegmentKind {
    Module,
    Class,
    Def,
    Assign,
    /// The first segment of an ast path into a file of any language: its path.
    File,
}

impl SegmentKind {
    pub const ALL: [SegmentKind; 5] = [
        SegmentKind::Module,
        SegmentKind::Class,
        SegmentKind::Def,
        SegmentKind::Assign,
        SegmentKind::File,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SegmentKind::File => "file",
            SegmentKind::Module => "module",
            SegmentKind::Class => "class",
            SegmentKind::Def => "def",
            SegmentKind::Assign => "assign",
        }
    }

    pub fn parse(s: &str) -> Option<SegmentKind> {
        SegmentKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One `[kind=name]` segment; JSON `["class", "C"]` (docs/selectors.md#json-positionspec).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AstSegment(pub SegmentKind, pub String);

impl AstSegment {
    /// `[class=C]`; a file's path percent-encoded, `]` too: `[file=web/a%5Db.ts]`.
    fn to_canonical(&self) -> String {
        match self {
            AstSegment(SegmentKind::File, path) => {
                format!("[file={}]", encode_path(path).replace(']', "%5D"))
            }
            AstSegment(k, name) => format!("[{}={name}]", k.as_str()),
        }
    }
}

/// The trailing `nodekind[N]` of an `ast://` path: the Nth (1-based) tree-sitter node of that
/// kind (or in that field) inside the construct, in document order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodePick {
    pub kind: String,
    pub index: u32,
}

impl PositionSpec {
    /// The file a selector names by path: a cursor's, range's, anchor's or `sym://`'s, an
    /// `ast://[file=…]`'s; `None` for the module forms (`py://`, `ast://[module=…]`).
    pub fn path(&self) -> Option<&str> {
        match self {
            PositionSpec::Cursor { path, .. }
            | PositionSpec::Range { path, .. }
            | PositionSpec::Anchor { path, .. }
            | PositionSpec::Sym { path, .. } => Some(path),
            PositionSpec::Ast { path, .. } => match path.first() {
                Some(AstSegment(SegmentKind::File, f)) => Some(f),
                _ => None,
            },
            PositionSpec::Symbol { .. } => None,
        }
    }

    pub fn indexing(&self) -> Option<Encoding> {
        match self {
            PositionSpec::Cursor { indexing, .. } | PositionSpec::Range { indexing, .. } => {
                *indexing
            }
            _ => None,
        }
    }

    pub fn doc_version(&self) -> Option<&str> {
        match self {
            PositionSpec::Cursor { doc_version, .. }
            | PositionSpec::Range { doc_version, .. }
            | PositionSpec::Symbol { doc_version, .. }
            | PositionSpec::Sym { doc_version, .. }
            | PositionSpec::Ast { doc_version, .. }
            | PositionSpec::Anchor { doc_version, .. } => doc_version.as_deref(),
        }
    }

    pub fn doc_version_mut(&mut self) -> &mut Option<String> {
        match self {
            PositionSpec::Cursor { doc_version, .. }
            | PositionSpec::Range { doc_version, .. }
            | PositionSpec::Symbol { doc_version, .. }
            | PositionSpec::Sym { doc_version, .. }
            | PositionSpec::Ast { doc_version, .. }
            | PositionSpec::Anchor { doc_version, .. } => doc_version,
        }
    }

    /// The name of the form, as in `"kind"`.
    pub fn kind(&self) -> &'static str {
        match self {
            PositionSpec::Cursor { .. } => "cursor",
            PositionSpec::Range { .. } => "range",
            PositionSpec::Symbol { .. } => "symbol",
            PositionSpec::Sym { .. } => "sym",
            PositionSpec::Ast { .. } => "ast",
            PositionSpec::Anchor { .. } => "anchor",
        }
    }

    /// The canonical string form.
    pub fn to_canonical(&self) -> String {
        let mut s = String::new();
        let mut query: Vec<String> = Vec::new();
        match self {
            PositionSpec::Cursor {
                path,
                line,
                col,
                name,
                occurrence,
                ..
            } => {
                s.push_str(&encode_path(path));
                match (col, name) {
                    (_, Some(n)) => match occurrence {
                        Some(k) if *k != 1 => write!(s, "@L{line}:{n}#{k}"),
                        _ => write!(s, "@L{line}:{n}"),
                    },
                    (Some(c), None) => write!(s, "@L{line}:C{c}"),
                    (None, None) => write!(s, "@L{line}:C1"),
                }
                .ok();
            }
            PositionSpec::Range {
                path, start, end, ..
            } => {
                s.push_str(&encode_path(path));
                write!(s, "@R({},{}->{},{})", start[0], start[1], end[0], end[1]).ok();
            }
            PositionSpec::Symbol {
                module,
                qualname,
                role,
                overload,
                ..
            } => {
                write!(s, "py://{module}#{qualname}").ok();
                if let Some(r) = role {
                    write!(s, ":{}", r.as_str()).ok();
                }
                if let Some(n) = overload {
                    query.push(format!("overload={n}"));
                }
            }
            PositionSpec::Sym {
                path,
                qualname,
                role,
                ..
            } => {
                write!(s, "sym://{}#{qualname}", encode_path(path)).ok();
                if let Some(r) = role {
                    write!(s, ":{}", r.as_str()).ok();
                }
            }
            PositionSpec::Ast { path, node, .. } => {
                s.push_str("ast://");
                let segs: Vec<String> = path.iter().map(AstSegment::to_canonical).collect();
                s.push_str(&segs.join("/"));
                if let Some(NodePick { kind, index }) = node {
                    write!(s, "/{kind}[{index}]").ok();
                }
            }
            PositionSpec::Anchor {
                path,
                snippet,
                ctx,
                hash,
                ..
            } => {
                write!(
                    s,
                    "anchor://{}#\"{}\"",
                    encode_path(path),
                    encode_snippet(snippet)
                )
                .ok();
                if let Some(c) = ctx {
                    query.push(format!("ctx={c}"));
                }
                if let Some(h) = hash {
                    query.push(format!("hash={h}"));
                }
            }
        }
        if let Some(dv) = self.doc_version() {
            query.push(format!("docVersion={dv}"));
        }
        if !query.is_empty() {
            s.push('?');
            s.push_str(&query.join("&"));
        }
        s
    }
}

fn push_escaped(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    for b in c.encode_utf8(&mut buf).bytes() {
        write!(out, "%{b:02X}").ok();
    }
}

/// Percent-encode the characters the grammar reserves in paths (`# ? % " @`, space, control
/// characters, a leading `{`). A Windows drive path becomes a `file:///C:/…` URI with an uppercase drive.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    let b = path.as_bytes();
    let body: std::borrow::Cow<str> = if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
    {
        out.push_str("file:///");
        out.push(char::from(b[0].to_ascii_uppercase()));
        path[1..].replace('\\', "/").into()
    } else {
        path.into()
    };
    for c in body.chars() {
        match c {
            '#' | '?' | '%' | '"' | ' ' | '@' => push_escaped(&mut out, c),
            c if c.is_control() => push_escaped(&mut out, c),
            // A selector whose first non-blank character is `{` is read as JSON.
            '{' if out.trim().is_empty() => push_escaped(&mut out, c),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encode an anchor snippet for the inside of its quotes: `# ? % " \`, space and
/// control characters (docs/selectors.md#escaping).
pub fn encode_snippet(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len() + 8);
    for c in snippet.chars() {
        match c {
            '#' | '?' | '%' | '"' | ' ' | '\\' => push_escaped(&mut out, c),
            c if c.is_control() => push_escaped(&mut out, c),
            _ => out.push(c),
        }
    }
    out
}

pub use crate::workspace::percent_decode;
