//! Selectors: the PositionSpec union and its canonical string form (paper §3.1, Appendix A;
//! DESIGN §3).
//!
//! This module owns parsing and printing. Resolving a selector against a workspace is
//! [`resolve`]'s job. Grammar of the string form handled here:
//!
//! ```text
//! selector   := locator ( "?" query )?
//! locator    := path "@" position
//! position   := "L" INT ":" ( "C" INT | IDENT ( "#" INT )? )      cursor / line:name#N
//!             | "R(" INT "," INT "->" INT "," INT ")"              range
//! path       := RELPATH | "/" ABSPATH | "file://" URI_PATH         percent-encoded # ? % " @ space
//! query      := "docVersion=" DIGEST
//! ```
//!
//! Lines and columns are 1-based; the column unit is the request's `--index-io`. The
//! structured form (`{"kind":"cursor",…}`) is accepted wherever a string is; a string that
//! starts with `{` is read as JSON. `py://`, `ast://` and `anchor://` are recognized and
//! refused with a clear error until the structural resolver lands (the enum is ready for them).

pub mod resolve;

use crate::error::{ErrorCode, LanserError};
use crate::text::Encoding;
use serde::{Deserialize, Serialize};

/// The structured selector (paper §3.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl PositionSpec {
    pub fn path(&self) -> &str {
        match self {
            PositionSpec::Cursor { path, .. } | PositionSpec::Range { path, .. } => path,
        }
    }

    pub fn indexing(&self) -> Option<Encoding> {
        match self {
            PositionSpec::Cursor { indexing, .. } | PositionSpec::Range { indexing, .. } => {
                *indexing
            }
        }
    }

    /// The canonical string form; `parse(to_canonical(s)) == s` up to `indexing`, which the
    /// string form leaves to `--index-io`.
    pub fn to_canonical(&self) -> String {
        let (path, pos, dv) = match self {
            PositionSpec::Cursor {
                path,
                line,
                col,
                name,
                occurrence,
                doc_version,
                ..
            } => {
                let pos = match (col, name) {
                    (_, Some(n)) => match occurrence {
                        Some(k) if *k != 1 => format!("L{line}:{n}#{k}"),
                        _ => format!("L{line}:{n}"),
                    },
                    (Some(c), None) => format!("L{line}:C{c}"),
                    (None, None) => format!("L{line}:C1"),
                };
                (path, pos, doc_version)
            }
            PositionSpec::Range {
                path,
                start,
                end,
                doc_version,
                ..
            } => (
                path,
                format!("R({},{}->{},{})", start[0], start[1], end[0], end[1]),
                doc_version,
            ),
        };
        let mut s = format!("{}@{}", encode_path(path), pos);
        if let Some(dv) = dv {
            s.push_str("?docVersion=");
            s.push_str(dv);
        }
        s
    }
}

/// Percent-encode the characters the grammar reserves in paths.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '#' | '?' | '%' | '"' | ' ' | '@' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Decode `%XX` escapes; `None` on a malformed escape or non-UTF-8 result.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn syntax(offset: usize, expected: &str, input: &str) -> LanserError {
    let found = match input[offset.min(input.len())..].chars().next() {
        Some(c) => format!("'{c}'"),
        None => "end of input".to_string(),
    };
    LanserError::new(
        ErrorCode::BadSelectorSyntax,
        format!("bad selector at byte {offset}: expected {expected}, found {found}"),
    )
}

/// A tiny cursor over the selector text, one method per terminal.
struct Lexer<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn expect(&mut self, lit: &str, what: &str) -> Result<(), LanserError> {
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            Err(syntax(self.pos, what, self.input))
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    /// A positive decimal integer (1-based coordinates and occurrence counts).
    fn int(&mut self, what: &str) -> Result<u32, LanserError> {
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        let text = &self.rest()[..digits];
        match text.parse::<u32>() {
            Ok(n) if n >= 1 => {
                self.pos += digits;
                Ok(n)
            }
            _ => Err(syntax(self.pos, what, self.input)),
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            let ok = if i == 0 {
                is_ident_start(c)
            } else {
                is_ident_char(c)
            };
            if !ok {
                break;
            }
            end = i + c.len_utf8();
        }
        if end == 0 {
            return None;
        }
        self.pos += end;
        Some(&rest[..end])
    }
}

pub fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

pub fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Parse a selector given on the command line: the string form, or the JSON PositionSpec.
pub fn parse(input: &str) -> Result<PositionSpec, LanserError> {
    let trimmed = input.trim();
    if trimmed.starts_with('{') {
        return serde_json::from_str(trimmed).map_err(|e| {
            LanserError::new(
                ErrorCode::BadSelectorSyntax,
                format!("bad PositionSpec JSON at column {}: {e}", e.column()),
            )
        });
    }
    for scheme in ["py://", "ast://", "anchor://"] {
        if input.starts_with(scheme) {
            return Err(LanserError::new(
                ErrorCode::BadSelectorSyntax,
                format!(
                    "bad selector at byte 0: {scheme} selectors are not supported by this build yet; use path@L<line>:C<col>, path@L<line>:<name> or path@R(l,c->l,c)"
                ),
            ));
        }
    }
    // The locator ends at the first '?' (paths percent-encode theirs).
    let (locator, query) = match input.find('?') {
        Some(q) => (&input[..q], Some(q)),
        None => (input, None),
    };
    let Some(at) = locator.rfind('@') else {
        return Err(syntax(locator.len(), "'@' after the path", input));
    };
    let raw_path = &locator[..at];
    if raw_path.is_empty() {
        return Err(syntax(0, "a file path", input));
    }
    let path =
        decode_path(raw_path).ok_or_else(|| syntax(0, "a valid percent-encoded path", input))?;

    let mut lx = Lexer {
        input: &input[..locator.len()],
        pos: at + 1,
    };
    let mut spec = if lx.eat("R(") {
        let sl = lx.int("a start line (positive integer)")?;
        lx.expect(",", "','")?;
        let sc = lx.int("a start column (positive integer)")?;
        lx.expect("->", "'->'")?;
        let el = lx.int("an end line (positive integer)")?;
        lx.expect(",", "','")?;
        let ec = lx.int("an end column (positive integer)")?;
        lx.expect(")", "')'")?;
        if (el, ec) < (sl, sc) {
            return Err(LanserError::new(
                ErrorCode::BadSelectorSyntax,
                format!("bad selector: range end {el},{ec} is before its start {sl},{sc}"),
            ));
        }
        PositionSpec::Range {
            path,
            start: [sl, sc],
            end: [el, ec],
            indexing: None,
            doc_version: None,
        }
    } else {
        lx.expect("L", "'L<line>' or 'R('")?;
        let line = lx.int("a line number (positive integer)")?;
        lx.expect(":", "':' after the line number")?;
        let (col, name, occurrence) = if lx.rest().starts_with('C')
            && lx.rest()[1..].starts_with(|c: char| c.is_ascii_digit())
        {
            lx.pos += 1;
            (
                Some(lx.int("a column number (positive integer)")?),
                None,
                None,
            )
        } else {
            let Some(name) = lx.ident() else {
                return Err(syntax(lx.pos, "'C<column>' or an identifier", input));
            };
            let occ = if lx.eat("#") {
                Some(lx.int("an occurrence number (positive integer)")?)
            } else {
                None
            };
            (None, Some(name.to_string()), occ)
        };
        PositionSpec::Cursor {
            path,
            line,
            col,
            name,
            occurrence,
            indexing: None,
            doc_version: None,
        }
    };
    if lx.pos != locator.len() {
        return Err(syntax(lx.pos, "end of the position or '?'", input));
    }
    if let Some(q) = query {
        let key = "docVersion=";
        let rest = &input[q + 1..];
        let Some(value) = rest.strip_prefix(key) else {
            return Err(syntax(q + 1, "'docVersion='", input));
        };
        let digest_ok = value
            .strip_prefix("sha256:")
            .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if !digest_ok {
            return Err(syntax(
                q + 1 + key.len(),
                "'sha256:' and 64 hex digits",
                input,
            ));
        }
        match &mut spec {
            PositionSpec::Cursor { doc_version, .. } | PositionSpec::Range { doc_version, .. } => {
                *doc_version = Some(value.to_ascii_lowercase())
            }
        }
    }
    Ok(spec)
}

/// A selector path: percent-decoded, `file://` URIs turned into plain paths.
fn decode_path(raw: &str) -> Option<String> {
    if let Some(rest) = raw.strip_prefix("file://") {
        let decoded = percent_decode(rest)?;
        // file:///C:/x → C:/x on Windows-style URIs; POSIX keeps the leading slash.
        let bytes = decoded.as_bytes();
        if bytes.len() > 3 && bytes[0] == b'/' && bytes[2] == b':' && bytes[1].is_ascii_alphabetic()
        {
            return Some(decoded[1..].to_string());
        }
        return Some(decoded);
    }
    percent_decode(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(path: &str, line: u32, col: u32) -> PositionSpec {
        PositionSpec::Cursor {
            path: path.into(),
            line,
            col: Some(col),
            name: None,
            occurrence: None,
            indexing: None,
            doc_version: None,
        }
    }

    #[test]
    fn parses_cursor_range_and_name_forms() {
        assert_eq!(
            parse("src/app.py@L42:C7").unwrap(),
            cursor("src/app.py", 42, 7)
        );
        assert_eq!(
            parse("src/app.py@R(42,7->44,1)").unwrap(),
            PositionSpec::Range {
                path: "src/app.py".into(),
                start: [42, 7],
                end: [44, 1],
                indexing: None,
                doc_version: None
            }
        );
        match parse("a.py@L3:load#2").unwrap() {
            PositionSpec::Cursor {
                name,
                occurrence,
                col,
                ..
            } => {
                assert_eq!(name.as_deref(), Some("load"));
                assert_eq!(occurrence, Some(2));
                assert_eq!(col, None);
            }
            other => panic!("{other:?}"),
        }
        // An identifier that starts with C is a name, not a column.
        match parse("a.py@L3:Circle").unwrap() {
            PositionSpec::Cursor { name, .. } => assert_eq!(name.as_deref(), Some("Circle")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn canonical_form_round_trips() {
        let dv = format!("sha256:{}", "ab".repeat(32));
        for s in [
            "src/app.py@L42:C7".to_string(),
            "src/app.py@R(1,1->2,3)".to_string(),
            "a%20b%23c.py@L1:名前#3".to_string(),
            format!("x.py@L2:C1?docVersion={dv}"),
        ] {
            let spec = parse(&s).unwrap();
            assert_eq!(spec.to_canonical(), s);
            assert_eq!(parse(&spec.to_canonical()).unwrap(), spec);
        }
    }

    #[test]
    fn json_form_is_accepted() {
        let spec = parse(r#"{"kind":"cursor","path":"a.py","line":1,"col":2}"#).unwrap();
        assert_eq!(spec, cursor("a.py", 1, 2));
    }

    #[test]
    fn errors_name_offset_and_expectation() {
        let cases = [
            ("a.py", "byte 4: expected '@' after the path"),
            ("a.py@L0:C1", "byte 6: expected a line number"),
            ("a.py@L1C1", "byte 7: expected ':' after the line number"),
            ("a.py@L1:C1x", "byte 10: expected end of the position"),
            ("a.py@R(1,2-3,4)", "byte 10: expected '->'"),
            ("a.py@L1:C1?v=1", "byte 11: expected 'docVersion='"),
            ("a.py@L1:+", "byte 8: expected 'C<column>' or an identifier"),
        ];
        for (input, want) in cases {
            let err = parse(input).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadSelectorSyntax, "{input}");
            assert!(err.message.contains(want), "{input}: {}", err.message);
        }
    }

    #[test]
    fn file_uris_decode() {
        assert_eq!(
            parse("file:///tmp/a%20b.py@L1:C1").unwrap().path(),
            "/tmp/a b.py"
        );
        assert_eq!(
            parse("file:///C:/w/a.py@L1:C1").unwrap().path(),
            "C:/w/a.py"
        );
    }
}
