//! The selector lexer: one method per terminal of the grammar in [`super`], over byte offsets
//! into the input. Selectors are context-dependent (a path may hold almost anything), so the
//! parser asks for the terminal it expects next instead of pulling a token stream.

use super::is_ident_char;
use super::is_ident_start;

/// A parse failure: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("bad selector at byte {offset}: expected {expected}, found {found}")]
    Expected {
        offset: usize,
        expected: String,
        found: String,
    },
    #[error("bad selector at byte {offset}: range end {end} is before its start {start}")]
    ReversedRange {
        offset: usize,
        start: String,
        end: String,
    },
    #[error("bad selector at byte {offset}: '{key}' given twice")]
    DuplicateKey { offset: usize, key: String },
    #[error("bad PositionSpec JSON at column {column}: {message}")]
    Json { column: usize, message: String },
    #[error("bad PositionSpec: {0}")]
    Invalid(String),
}

impl From<SelectorError> for crate::error::LanserError {
    fn from(e: SelectorError) -> Self {
        crate::error::LanserError::new(crate::error::ErrorCode::BadSelectorSyntax, e.to_string())
    }
}

pub type PResult<T> = std::result::Result<T, SelectorError>;

pub struct Lexer<'a> {
    pub input: &'a str,
    pub pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(input: &'a str) -> Lexer<'a> {
        Lexer { input, pos: 0 }
    }

    pub fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    /// An error at the current offset.
    pub fn expected(&self, what: &str) -> SelectorError {
        self.expected_at(self.pos, what)
    }

    pub fn expected_at(&self, offset: usize, what: &str) -> SelectorError {
        let found = match self.input.get(offset..).and_then(|r| r.chars().next()) {
            Some(c) if c.is_control() => format!("{c:?}"),
            Some(c) => format!("'{c}'"),
            None => "end of input".to_string(),
        };
        SelectorError::Expected {
            offset,
            expected: what.to_string(),
            found,
        }
    }

    pub fn peek(&self, lit: &str) -> bool {
        self.rest().starts_with(lit)
    }

    pub fn eat(&mut self, lit: &str) -> bool {
        if self.peek(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, lit: &str, what: &str) -> PResult<()> {
        if self.eat(lit) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    /// A decimal integer ≥ `min`.
    pub fn int(&mut self, min: u32, what: &str) -> PResult<u32> {
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        match self.rest()[..digits].parse::<u32>() {
            Ok(n) if n >= min => {
                self.pos += digits;
                Ok(n)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// An identifier (Unicode letters, digits, `_`, `$`; not starting with a digit).
    pub fn ident(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            let ok = if i == 0 {
                is_ident_start(c) || c == '$'
            } else {
                is_ident_char(c) || c == '$'
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

    /// One part of a module name: an identifier, or a path-like name a file can have that an
    /// identifier cannot (`0001_initial`, `my-script`): letters, digits, `_`, `-`.
    pub fn module_part(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let end = rest
            .char_indices()
            .find(|(_, c)| !crate::selector::is_module_char(*c))
            .map_or(rest.len(), |(i, _)| i);
        if end == 0 {
            return None;
        }
        self.pos += end;
        Some(&rest[..end])
    }

    /// A name of a `sym://` or `ast://` selector: an identifier, which may also hold `-`
    /// after its first character (`cert-file`, `main-nav`: keys, ids and CSS classes).
    pub fn key_name(&mut self) -> Option<&'a str> {
        let start = self.pos;
        self.ident()?;
        let rest = self.rest();
        let more = rest
            .char_indices()
            .find(|(_, c)| !(is_ident_char(*c) || *c == '$' || *c == '-'))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += more;
        Some(&self.input[start..self.pos])
    }

    pub fn expect_ident(&mut self, what: &str) -> PResult<&'a str> {
        self.ident().ok_or_else(|| self.expected(what))
    }

    /// Raw text up to (not including) the first byte in `stops`, or the end.
    pub fn until(&mut self, stops: &[u8]) -> &'a str {
        let rest = self.rest();
        let n = rest
            .bytes()
            .position(|b| stops.contains(&b))
            .unwrap_or(rest.len());
        self.pos += n;
        &rest[..n]
    }

    /// A `"…"` snippet: `\"`, `\/` and `\\` escapes, `%XX` percent escapes; returns the decoded
    /// text.
    pub fn quoted(&mut self) -> PResult<String> {
        self.expect("\"", "'\"' opening the snippet")?;
        let start = self.pos;
        let mut bytes = Vec::new();
        loop {
            let Some(&b) = self.input.as_bytes().get(self.pos) else {
                return Err(self.expected("'\"' closing the snippet"));
            };
            match b {
                b'"' => break,
                b'\\' => {
                    let next = self.input.as_bytes().get(self.pos + 1).copied();
                    match next {
                        Some(c @ (b'"' | b'/' | b'\\')) => {
                            bytes.push(c);
                            self.pos += 2;
                        }
                        _ => {
                            bytes.push(b'\\');
                            self.pos += 1;
                        }
                    }
                }
                b'%' => {
                    let hex = self.input.get(self.pos + 1..self.pos + 3);
                    match hex.filter(|h| h.bytes().all(|x| x.is_ascii_hexdigit())) {
                        Some(h) => {
                            bytes.push(u8::from_str_radix(h, 16).unwrap_or(0));
                            self.pos += 3;
                        }
                        None => {
                            return Err(self.expected_at(self.pos + 1, "two hex digits after '%'"))
                        }
                    }
                }
                _ => {
                    bytes.push(b);
                    self.pos += 1;
                }
            }
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| self.expected_at(start, "a snippet that decodes to UTF-8"))?;
        if text.is_empty() {
            return Err(self.expected_at(start, "a non-empty snippet"));
        }
        self.pos += 1;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminals() {
        let mut lx = Lexer::new("名前_1.x");
        assert_eq!(lx.ident(), Some("名前_1"));
        assert!(lx.eat("."));
        assert_eq!(lx.ident(), Some("x"));
        assert!(lx.at_end());

        let mut lx = Lexer::new("007,");
        assert_eq!(lx.int(1, "n").unwrap(), 7);
        assert_eq!(lx.rest(), ",");
        let mut lx = Lexer::new("0");
        assert!(lx.int(1, "n").is_err());
        assert_eq!(Lexer::new("0").int(0, "n").unwrap(), 0);
    }

    #[test]
    fn quoted_snippets_unescape() {
        let mut lx = Lexer::new(r#""def f(%22a%22, \"b\", c\/d, e\\, x#y?z w)"rest"#);
        assert_eq!(lx.quoted().unwrap(), r#"def f("a", "b", c/d, e\, x#y?z w)"#);
        assert_eq!(lx.rest(), "rest");
        // A lone backslash stays one.
        assert_eq!(Lexer::new(r#""a\nb""#).quoted().unwrap(), "a\\nb");
        let e = Lexer::new(r#""ab%2"#).quoted().unwrap_err();
        assert!(
            e.to_string().contains("byte 4: expected two hex digits"),
            "{e}"
        );
        let e = Lexer::new(r#""abc"#).quoted().unwrap_err();
        assert!(
            e.to_string().contains("byte 4: expected '\"' closing"),
            "{e}"
        );
        let e = Lexer::new(r#""""#).quoted().unwrap_err();
        assert!(e.to_string().contains("non-empty snippet"), "{e}");
        let e = Lexer::new(r#""%FF""#).quoted().unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
    }
}
