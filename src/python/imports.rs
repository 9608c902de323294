//! A tokenizer-level scan of Python source for import statements and dotted names, with byte
//! offsets, for `rename-file`'s import rewriting and for finding a module's importers.
//!
//! The tokenizer knows just enough Python to never mistake text inside strings (including
//! triple-quoted, prefixed and f-strings) or comments for code: it yields names, the
//! punctuation import statements use, and logical-line ends (brackets and backslash
//! continuations join physical lines). On top of it, [`scan`] finds every `import …` and
//! `from … import …` statement (at the start of a logical line, after `;`, or after the `:` of a
//! one-line compound statement) and every dotted name used elsewhere.

use crate::selector::{is_ident_char, is_ident_start};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Name,
    /// One punctuation character (`.`, `,`, `(`, `;`, `:`, `*`, …).
    Op(char),
    /// The end of a logical line (the newline characters themselves).
    Newline,
    /// A string or number literal.
    Literal,
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
}

/// A name with its byte span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// `a.b.c`: its parts, each with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dotted {
    pub parts: Vec<Name>,
}

impl Dotted {
    pub fn start(&self) -> usize {
        self.parts[0].start
    }
    pub fn end(&self) -> usize {
        self.parts[self.parts.len() - 1].end
    }
    pub fn names(&self) -> Vec<&str> {
        self.parts.iter().map(|p| p.text.as_str()).collect()
    }
}

/// One `X [as Y]` of an import statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// For `import`, a dotted module name; for `from … import`, one name.
    pub name: Dotted,
    pub alias: Option<Name>,
    /// From the name's start to the alias's (or name's) end.
    pub start: usize,
    pub end: usize,
    /// The span of the comma that follows the item, if any.
    pub comma: Option<(usize, usize)>,
}

/// One import statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// `from` only: leading dots and module (`..pkg.mod`): level, module, their span.
    pub from: Option<FromModule>,
    pub items: Vec<Item>,
    /// `from x import *`.
    pub star: bool,
    /// From the `import`/`from` keyword to the last token of the statement.
    pub start: usize,
    pub end: usize,
    /// Where the next statement would start: after the logical line's newline (or the end of
    /// the text), and the newline's characters (`""` at the end of a text without one).
    pub line_end: usize,
    pub newline: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromModule {
    pub level: usize,
    pub module: Option<Dotted>,
    pub start: usize,
    pub end: usize,
}

/// Every import statement and every dotted name outside them.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub imports: Vec<Import>,
    /// Maximal `a.b.c` sequences not preceded by `.` (so `x.a.b` yields only `x.a.b`).
    pub uses: Vec<Dotted>,
}

fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut toks: Vec<Tok> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let push_newline = |toks: &mut Vec<Tok>, start: usize, end: usize| {
        if toks.last().is_some_and(|t| t.kind != Kind::Newline) {
            toks.push(Tok {
                kind: Kind::Newline,
                start,
                end,
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\x0c' => i += 1,
            b'\r' | b'\n' => {
                let end = if c == b'\r' && b.get(i + 1) == Some(&b'\n') {
                    i + 2
                } else {
                    i + 1
                };
                if depth == 0 {
                    push_newline(&mut toks, i, end);
                }
                i = end;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    i += 1;
                }
            }
            b'\\' => {
                // A line continuation (or a stray backslash): skip it and its newline.
                i += 1;
                if b.get(i) == Some(&b'\r') {
                    i += 1;
                }
                if b.get(i) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\'' | b'"' => {
                let end = string_end(text, i, false);
                toks.push(Tok {
                    kind: Kind::Literal,
                    start: i,
                    end,
                });
                i = end;
            }
            b'0'..=b'9' | b'.' if c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let end = number_end(b, i);
                toks.push(Tok {
                    kind: Kind::Literal,
                    start: i,
                    end,
                });
                i = end;
            }
            _ if c < 0x80 && !(c == b'_' || c.is_ascii_alphabetic()) => {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                toks.push(Tok {
                    kind: Kind::Op(c as char),
                    start: i,
                    end: i + 1,
                });
                i += 1;
            }
            _ => match word_token(text, i) {
                Some(tok) => {
                    i = tok.end;
                    toks.push(tok);
                }
                // Some other non-ASCII character outside a string: not code we read.
                None => i += text[i..].chars().next().map_or(1, char::len_utf8),
            },
        }
    }
    toks
}

/// The byte after the number literal at `i` (`12`, `0x1f`, `1.5e3`, `.5`).
fn number_end(b: &[u8], mut i: usize) -> usize {
    let leading_dot = b[i] == b'.';
    if leading_dot {
        i += 1;
    }
    while i < b.len()
        && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || (!leading_dot && b[i] == b'.'))
    {
        i += 1;
    }
    i
}

/// The name, or the prefixed string literal (`rb"…"`, `f'…'`), that starts at `i`; `None`
/// when the character there starts no identifier.
fn word_token(text: &str, i: usize) -> Option<Tok> {
    let ch = text[i..].chars().next()?;
    if !is_ident_start(ch) {
        return None;
    }
    let mut end = i;
    for (off, ch) in text[i..].char_indices() {
        if !is_ident_char(ch) {
            break;
        }
        end = i + off + ch.len_utf8();
    }
    let word = &text[i..end];
    let quote = text
        .as_bytes()
        .get(end)
        .is_some_and(|q| *q == b'\'' || *q == b'"');
    if quote && is_string_prefix(word) {
        let f = word.to_ascii_lowercase().contains('f');
        return Some(Tok {
            kind: Kind::Literal,
            start: i,
            end: string_end(text, end, f),
        });
    }
    Some(Tok {
        kind: Kind::Name,
        start: i,
        end,
    })
}

fn is_string_prefix(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf" | "t" | "tr" | "rt"
    )
}

/// The byte after the string literal whose opening quote is at `at`. An unterminated
/// single-quoted string ends at the end of its line.
fn string_end(text: &str, at: usize, fstring: bool) -> usize {
    let b = text.as_bytes();
    let q = b[at];
    let triple = b.get(at + 1) == Some(&q) && b.get(at + 2) == Some(&q);
    let mut i = if triple { at + 3 } else { at + 1 };
    while i < b.len() {
        let c = b[i];
        if c == b'\\' {
            i += 2;
            continue;
        }
        if !triple && (c == b'\n' || c == b'\r') {
            return i;
        }
        if c == q && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q))) {
            return if triple { i + 3 } else { i + 1 };
        }
        if fstring && c == b'{' {
            if b.get(i + 1) == Some(&b'{') {
                i += 2;
                continue;
            }
            i = fstring_expr_end(text, i + 1);
            continue;
        }
        i += 1;
    }
    b.len()
}

/// The byte after the `}` closing an f-string replacement field that starts at `at`; nested
/// strings inside the field are skipped whole.
fn fstring_expr_end(text: &str, at: usize) -> usize {
    let b = text.as_bytes();
    let mut depth = 1;
    let mut i = at;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'\'' | b'"' => {
                let f = i > 0 && matches!(b[i - 1], b'f' | b'F');
                i = string_end(text, i, f);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

struct Parser<'t> {
    text: &'t str,
    toks: Vec<Tok>,
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.i).copied()
    }
    fn is_op(&self, c: char) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Op(c))
    }
    fn is_word(&self, w: &str) -> bool {
        self.peek()
            .is_some_and(|t| t.kind == Kind::Name && &self.text[t.start..t.end] == w)
    }
    fn name(&mut self) -> Option<Name> {
        let t = self.peek()?;
        if t.kind != Kind::Name {
            return None;
        }
        self.i += 1;
        Some(Name {
            text: self.text[t.start..t.end].to_string(),
            start: t.start,
            end: t.end,
        })
    }
    fn dotted(&mut self) -> Option<Dotted> {
        let mut parts = vec![self.name()?];
        while self.is_op('.')
            && self
                .toks
                .get(self.i + 1)
                .is_some_and(|t| t.kind == Kind::Name)
        {
            self.i += 1;
            parts.push(self.name()?);
        }
        Some(Dotted { parts })
    }
    /// `X [as Y] (, X [as Y])* [,]`, with `dotted` names for `import` statements.
    fn items(&mut self, dotted: bool, parenthesized: bool) -> Vec<Item> {
        let mut items = Vec::new();
        loop {
            let name = if dotted {
                self.dotted()
            } else {
                self.name().map(|n| Dotted { parts: vec![n] })
            };
            let Some(name) = name else { break };
            let alias = if self.is_word("as") {
                self.i += 1;
                self.name()
            } else {
                None
            };
            let end = alias.as_ref().map_or(name.end(), |a| a.end);
            let mut item = Item {
                start: name.start(),
                end,
                name,
                alias,
                comma: None,
            };
            if self.is_op(',') {
                let t = self.peek().expect("checked");
                item.comma = Some((t.start, t.end));
                self.i += 1;
                items.push(item);
                if !parenthesized && !self.peek().is_some_and(|t| t.kind == Kind::Name) {
                    break;
                }
            } else {
                items.push(item);
                break;
            }
        }
        items
    }

    /// The statement starting at the current `import`/`from` keyword, or `None` when the
    /// tokens are not an import after all.
    fn import(&mut self) -> Option<Import> {
        let kw = self.peek()?;
        let mut stmt = Import {
            from: None,
            items: Vec::new(),
            star: false,
            start: kw.start,
            end: kw.end,
            line_end: self.text.len(),
            newline: String::new(),
        };
        if self.is_word("import") {
            self.i += 1;
            stmt.items = self.items(true, false);
        } else {
            self.i += 1;
            let mut level = 0;
            let mut start = None;
            let mut end = kw.end;
            while self.is_op('.') {
                let t = self.peek().expect("checked");
                start.get_or_insert(t.start);
                end = t.end;
                level += 1;
                self.i += 1;
            }
            let module = if self.is_word("import") {
                None
            } else {
                self.dotted()
            };
            if let Some(m) = &module {
                start.get_or_insert(m.start());
                end = m.end();
            }
            let start = start?;
            if !self.is_word("import") {
                return None;
            }
            self.i += 1;
            stmt.from = Some(FromModule {
                level,
                module,
                start,
                end,
            });
            if self.is_op('*') {
                stmt.star = true;
                self.i += 1;
            } else if self.is_op('(') {
                self.i += 1;
                stmt.items = self.items(false, true);
                if self.is_op(')') {
                    self.i += 1;
                }
            } else {
                stmt.items = self.items(false, false);
            }
        }
        if stmt.items.is_empty() && !stmt.star {
            return None;
        }
        stmt.end = self.toks[self.i - 1].end;
        // The logical line's end: the next newline token at or after here.
        let newline = self.toks[self.i..]
            .iter()
            .find(|t| t.kind == Kind::Newline)
            .copied();
        if let Some(t) = newline {
            stmt.line_end = t.end;
            stmt.newline = self.text[t.start..t.end].to_string();
        }
        Some(stmt)
    }
}

/// Find the import statements and dotted-name uses of `text`.
pub fn scan(text: &str) -> Scan {
    let toks = tokenize(text);
    let mut p = Parser { text, toks, i: 0 };
    let mut out = Scan::default();
    let mut statement_start = true;
    while let Some(t) = p.peek() {
        if statement_start && (p.is_word("import") || p.is_word("from")) {
            let at = p.i;
            if let Some(stmt) = p.import() {
                out.imports.push(stmt);
                statement_start = false;
                continue;
            }
            p.i = at;
        }
        statement_start = matches!(t.kind, Kind::Newline | Kind::Op(';') | Kind::Op(':'));
        let after_dot = p.i > 0 && p.toks[p.i - 1].kind == Kind::Op('.');
        if t.kind == Kind::Name && !after_dot {
            let d = p.dotted().expect("at a name");
            out.uses.push(d);
            statement_start = false;
            continue;
        }
        p.i += 1;
    }
    out
}

/// The indentation (leading spaces and tabs) of the line holding byte `at`.
pub fn indentation(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &Scan, text: &str) -> Vec<String> {
        s.imports
            .iter()
            .map(|i| {
                let from = i.from.as_ref().map(|f| text[f.start..f.end].to_string());
                let items: Vec<String> = i
                    .items
                    .iter()
                    .map(|it| text[it.start..it.end].to_string())
                    .collect();
                format!("{from:?} {items:?} {}", i.star)
            })
            .collect()
    }

    #[test]
    fn finds_every_import_form() {
        let text = "import a.b, c as d\nfrom .x import (y,  # c\n    z as w,\n)\nfrom ..p.q import \\\n    r\nfrom . import *\nif T: from m import n\nx = 1; import k\n";
        let s = scan(text);
        assert_eq!(
            show(&s, text),
            [
                "None [\"a.b\", \"c as d\"] false",
                "Some(\".x\") [\"y\", \"z as w\"] false",
                "Some(\"..p.q\") [\"r\"] false",
                "Some(\".\") [] true",
                "Some(\"m\") [\"n\"] false",
                "None [\"k\"] false",
            ]
        );
        assert_eq!(s.imports[1].newline, "\n");
        assert_eq!(
            &text[s.imports[1].line_end..s.imports[1].line_end + 4],
            "from"
        );
    }

    #[test]
    fn strings_and_comments_are_never_code() {
        let text = "s = 'import a.b'\nt = \"\"\"\nfrom a import b\n\"\"\"\n# import a\nu = f\"{a.b!r} {'x'}\" + rb'\\'import'\nraise E from a.b\nv = a.b.c(x.a.b)\n";
        let s = scan(text);
        assert!(s.imports.is_empty(), "{:?}", show(&s, text));
        let uses: Vec<String> = s.uses.iter().map(|d| d.names().join(".")).collect();
        assert_eq!(
            uses,
            ["s", "t", "u", "raise", "E", "from", "a.b", "v", "a.b.c", "x.a.b"]
        );
    }

    #[test]
    fn crlf_and_unicode() {
        let text = "\u{feff}面积 = 1\r\nfrom 形状 import 圆\r\n";
        let s = scan(text);
        assert_eq!(s.imports.len(), 1);
        assert_eq!(s.imports[0].newline, "\r\n");
        assert_eq!(s.imports[0].items[0].name.parts[0].text, "圆");
        assert_eq!(indentation("a\n    b", 5), "    ");
    }
}
