//! Selectors: the PositionSpec union and its canonical string form (docs/selectors.md).
//! [`lexer`] and [`parser`] read the string form, [`spec`] holds the union and
//! prints it; [`resolve`] maps cursors and ranges onto files (the structural forms and anchors
//! are `crate::relocate`'s).
//!
//! Grammar of the string form (EBNF; every form may end in a query):
//!
//! ```text
//! selector  := locator | symbolic | filesym | astpath | anchor
//! locator   := path "@" position query?
//! position  := "L" INT ":" ( "C" INT | IDENT ( "#" INT )? )      cursor / line:name#N
//!            | "R(" INT "," INT "->" INT "," INT ")"              range (end ≥ start)
//! symbolic  := "py://" modname "#" dotted ( ":" role )? query?    query keys: overload, docVersion
//! filesym   := "sym://" path "#" names ( ":" role )? query?       query key: docVersion
//! role      := "def" | "sig" | "body" | "doc"
//! astpath   := "ast://" ( "[module=" modname | "[file=" path ) "]" ( "/" segment )*
//!              ( "/" IDENT "[" INT "]" )? query?                   ("]" in path: "%5D")
//! segment   := "[" ( "class" | "def" | "assign" ) "=" NAME "]"
//! anchor    := "anchor://" path "#" quoted query?                query keys: ctx, hash, docVersion
//! quoted    := "\"" ( CHAR | "\\\"" | "\\/" | "\\\\" | "%" HEX HEX )+ "\""      CHAR: any but "\"", "\\", "%"
//! query     := "?" param ( "&" param )*                          each key at most once
//! param     := "overload=" INT | "ctx=" INT | "hash=sha1:" HEX{40} | "docVersion=sha256:" HEX{64}
//! dotted    := IDENT ( "." IDENT )*
//! names     := NAME ( "." NAME )*                  NAME: an IDENT, "-" allowed after its start
//! modname   := PART ( "." PART )*                 PART: letters, digits, "_", "-" (0001_initial)
//! path      := RELPATH | "/" ABSPATH | "file://" URI_PATH | DRIVE ":/" PATH
//! ```
//!
//! Lines, columns, `#N` and `nodekind[N]` are 1-based, `overload` 0-based; the column unit is
//! the request's `--index-io`. IDENT is an identifier (Unicode letters, digits, `_`, `$`;
//! not starting with a digit); `sym://` and `ast://[file=…]` name a definition in a file of
//! any language with an outline (`crate::relocate::grammars`). Paths
//! and snippets percent-encode `# ? % "` and space (paths also `@`, snippets also `\`);
//! `file:///c:/x` and `C:\x` both mean `C:/x`, printed `file:///C:/x`. The structured form
//! (`{"kind":"cursor",…}`, `{"kind":"symbol","module":…,"qualname":…}`, …) is accepted
//! wherever a string is: a string that starts with `{` is read as JSON and normalized through
//! the canonical string form. Errors name the byte offset and the expected token.

pub mod lexer;
pub mod parser;
pub mod resolve;
pub mod spec;

pub use lexer::SelectorError;
pub use spec::{
    encode_path, encode_snippet, percent_decode, AstSegment, NodePick, PositionSpec, Role,
    SegmentKind, DEFAULT_CTX,
};

use crate::error::LanserError;

pub fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

pub fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// A character of a module name part: an identifier's, or `-` (a path-like module name, for
/// files such as `migrations/0001_initial.py` or `my-script.py`).
pub fn is_module_char(c: char) -> bool {
    is_ident_char(c) || c == '-'
}

/// Parse a selector given on the command line: the string form, or the JSON PositionSpec.
pub fn parse(input: &str) -> Result<PositionSpec, LanserError> {
    let trimmed = input.trim();
    if trimmed.starts_with('{') {
        return Ok(parse_json(trimmed)?);
    }
    Ok(parser::selector(input)?)
}

/// The JSON form, checked and normalized by printing it and reading the print back. The
/// colon form `"qualname": "pkg.mod:Class.method"` (no `module`) is accepted too.
pub fn parse_json(text: &str) -> Result<PositionSpec, SelectorError> {
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| SelectorError::Json {
            column: e.column(),
            message: e.to_string(),
        })?;
    if value.get("kind").and_then(|k| k.as_str()) == Some("symbol") && value.get("module").is_none()
    {
        let q = value.get("qualname").and_then(|q| q.as_str()).unwrap_or("");
        if let Some((m, rest)) = q.split_once(':') {
            let (m, rest) = (m.to_string(), rest.to_string());
            value["module"] = m.into();
            value["qualname"] = rest.into();
        }
    }
    let spec: PositionSpec = serde_json::from_value(value).map_err(|e| SelectorError::Json {
        column: 0,
        message: e.to_string(),
    })?;
    let printed = spec.to_canonical();
    let mut back = parser::selector(&printed).map_err(|e| {
        SelectorError::Invalid(format!(
            "the {} spec does not form a valid selector ({printed}): {e}",
            spec.kind()
        ))
    })?;
    if let (
        PositionSpec::Cursor { indexing: a, .. } | PositionSpec::Range { indexing: a, .. },
        Some(i),
    ) = (&mut back, spec.indexing())
    {
        *a = Some(i);
    }
    Ok(back)
}

#[cfg(test)]
mod tests;
