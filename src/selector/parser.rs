//! Recursive descent over the selector grammar in [`super`]: one function per rule, each
//! asking the [`Lexer`] for the terminal it expects and failing with the byte offset and what
//! was expected there.

use super::lexer::{Lexer, PResult, SelectorError};
use super::spec::{percent_decode, AstSegment, NodePick, PositionSpec, Role, SegmentKind};

/// `selector := locator | symbolic | astpath | anchor` (string form only).
pub fn selector(input: &str) -> PResult<PositionSpec> {
    let mut lx = Lexer::new(input);
    let spec = if lx.eat("py://") {
        symbolic(&mut lx)?
    } else if lx.eat("sym://") {
        file_symbol(&mut lx)?
    } else if lx.eat("ast://") {
        astpath(&mut lx)?
    } else if lx.eat("anchor://") {
        anchor(&mut lx)?
    } else {
        locator(&mut lx)?
    };
    if !lx.at_end() {
        return Err(lx.expected("end of the selector"));
    }
    Ok(spec)
}

/// `locator := path "@" position query?` — the path ends at the last `@` before the first `?`
/// (paths percent-encode theirs).
fn locator(lx: &mut Lexer) -> PResult<PositionSpec> {
    let input = lx.input;
    let end = input.find('?').unwrap_or(input.len());
    let Some(at) = input[..end].rfind('@') else {
        return Err(lx.expected_at(end, "'@' after the path"));
    };
    let path = path_text(lx, &input[..at], 0)?;
    lx.pos = at + 1;
    let mut spec = position(lx, path)?;
    if lx.pos != end {
        return Err(lx.expected("end of the position or '?'"));
    }
    let q = query(lx, &[Key::DocVersion])?;
    *spec.doc_version_mut() = q.doc_version;
    Ok(spec)
}

/// A percent-encoded path or `file://` URI starting at byte `offset`.
fn path_text(lx: &Lexer, raw: &str, offset: usize) -> PResult<String> {
    if raw.is_empty() {
        return Err(lx.expected_at(offset, "a file path"));
    }
    decode_path(raw).ok_or_else(|| lx.expected_at(offset, "a valid percent-encoded path"))
}

/// `position := "L" INT ":" ("C" INT | IDENT ("#" INT)?) | "R(" INT "," INT "->" INT "," INT ")"`
fn position(lx: &mut Lexer, path: String) -> PResult<PositionSpec> {
    if lx.eat("R(") {
        let at = lx.pos;
        let sl = lx.int(1, "a start line (positive integer)")?;
        lx.expect(",", "','")?;
        let sc = lx.int(1, "a start column (positive integer)")?;
        lx.expect("->", "'->'")?;
        let el = lx.int(1, "an end line (positive integer)")?;
        lx.expect(",", "','")?;
        let ec = lx.int(1, "an end column (positive integer)")?;
        lx.expect(")", "')'")?;
        if (el, ec) < (sl, sc) {
            return Err(SelectorError::ReversedRange {
                offset: at,
                start: format!("{sl},{sc}"),
                end: format!("{el},{ec}"),
            });
        }
        return Ok(PositionSpec::Range {
            path,
            start: [sl, sc],
            end: [el, ec],
            indexing: None,
            doc_version: None,
        });
    }
    lx.expect("L", "'L<line>' or 'R('")?;
    let line = lx.int(1, "a line number (positive integer)")?;
    lx.expect(":", "':' after the line number")?;
    let (col, name, occurrence) =
        if lx.peek("C") && lx.rest()[1..].starts_with(|c: char| c.is_ascii_digit()) {
            lx.pos += 1;
            let c = lx.int(1, "a column number (positive integer)")?;
            (Some(c), None, None)
        } else {
            let name = lx.expect_ident("'C<column>' or an identifier")?.to_string();
            let occ = if lx.eat("#") {
                Some(lx.int(1, "an occurrence number (positive integer)")?)
            } else {
                None
            };
            (None, Some(name), occ)
        };
    Ok(PositionSpec::Cursor {
        path,
        line,
        col,
        name,
        occurrence,
        indexing: None,
        doc_version: None,
    })
}

/// `dotted := IDENT ("." IDENT)*`; with `keys`, `names := NAME ("." NAME)*`, a NAME being
/// an identifier that may hold `-` after its first character (a YAML key, an HTML id).
fn dotted(lx: &mut Lexer, what: &str, keys: bool) -> PResult<String> {
    let mut s = name(lx, what, keys)?;
    while lx.eat(".") {
        s.push('.');
        s.push_str(&name(lx, "an identifier after '.'", keys)?);
    }
    Ok(s)
}

fn name(lx: &mut Lexer, what: &str, keys: bool) -> PResult<String> {
    let n = if keys { lx.key_name() } else { lx.ident() };
    n.map(str::to_string).ok_or_else(|| lx.expected(what))
}

/// `modname := PART ("." PART)*`, a PART being an identifier or a path-like file name
/// (letters, digits, `_`, `-`: `app.migrations.0001_initial`).
fn module_name(lx: &mut Lexer, what: &str) -> PResult<String> {
    let mut s = lx
        .module_part()
        .ok_or_else(|| lx.expected(what))?
        .to_string();
    while lx.eat(".") {
        s.push('.');
        let part = lx.module_part();
        s.push_str(part.ok_or_else(|| lx.expected("a module name part after '.'"))?);
    }
    Ok(s)
}

/// `symbolic := "py://" modname "#" dotted (":" role)? query?`
fn symbolic(lx: &mut Lexer) -> PResult<PositionSpec> {
    let module = module_name(lx, "a module name")?;
    lx.expect("#", "'#' after the module name")?;
    let qualname = dotted(lx, "a qualified name", false)?;
    let role = role(lx)?;
    let q = query(lx, &[Key::Overload, Key::DocVersion])?;
    Ok(PositionSpec::Symbol {
        module,
        qualname,
        role,
        overload: q.overload,
        doc_version: q.doc_version,
    })
}

/// `filesym := "sym://" path "#" names (":" role)? query?`
fn file_symbol(lx: &mut Lexer) -> PResult<PositionSpec> {
    let at = lx.pos;
    let raw = lx.until(b"#?");
    let path = path_text(lx, raw, at)?;
    lx.expect("#", "'#' after the path")?;
    let qualname = dotted(lx, "a qualified name", true)?;
    let role = role(lx)?;
    let q = query(lx, &[Key::DocVersion])?;
    Ok(PositionSpec::Sym {
        path,
        qualname,
        role,
        doc_version: q.doc_version,
    })
}

/// `(":" role)?`
fn role(lx: &mut Lexer) -> PResult<Option<Role>> {
    if !lx.eat(":") {
        return Ok(None);
    }
    let at = lx.pos;
    let r = lx.ident().and_then(Role::parse);
    Ok(Some(r.ok_or_else(|| {
        lx.expected_at(at, "a role: def, sig, body or doc")
    })?))
}

/// `astpath := "ast://" ("[module=" modname | "[file=" path) "]" ("/" segment)*
/// ("/" nodekind "[" INT "]")? query?`
fn astpath(lx: &mut Lexer) -> PResult<PositionSpec> {
    let mut path = vec![];
    let mut node = None;
    if lx.eat("[file=") {
        let at = lx.pos;
        let raw = lx.until(b"]");
        path.push(AstSegment(SegmentKind::File, path_text(lx, raw, at)?));
    } else {
        lx.expect(
            "[module=",
            "'[module=' or '[file=' (an ast path starts at its module or file)",
        )?;
        path.push(AstSegment(
            SegmentKind::Module,
            module_name(lx, "a module name")?,
        ));
    }
    lx.expect("]", "']'")?;
    while lx.eat("/") {
        if lx.eat("[") {
            let at = lx.pos;
            let kind = lx.ident().and_then(SegmentKind::parse);
            let kind = match kind {
                Some(k) if !matches!(k, SegmentKind::Module | SegmentKind::File) => k,
                _ => return Err(lx.expected_at(at, "a segment kind: class, def or assign")),
            };
            lx.expect("=", "'='")?;
            let name = lx.key_name().ok_or_else(|| lx.expected("a name"))?;
            let name = name.to_string();
            lx.expect("]", "']'")?;
            path.push(AstSegment(kind, name));
        } else {
            let kind = lx.expect_ident("'[kind=name]' or a node kind")?.to_string();
            lx.expect("[", "'[' after the node kind")?;
            let index = lx.int(1, "a node index (positive integer)")?;
            lx.expect("]", "']'")?;
            node = Some(NodePick { kind, index });
            break;
        }
    }
    let q = query(lx, &[Key::DocVersion])?;
    Ok(PositionSpec::Ast {
        path,
        node,
        doc_version: q.doc_version,
    })
}

/// `anchor := "anchor://" path "#" quoted query?`
fn anchor(lx: &mut Lexer) -> PResult<PositionSpec> {
    let at = lx.pos;
    let raw = lx.until(b"#");
    let path = path_text(lx, raw, at)?;
    lx.expect("#", "'#' after the path")?;
    let snippet = lx.quoted()?;
    let q = query(lx, &[Key::Ctx, Key::Hash, Key::DocVersion])?;
    Ok(PositionSpec::Anchor {
        path,
        snippet,
        ctx: q.ctx,
        hash: q.hash,
        doc_version: q.doc_version,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Overload,
    Ctx,
    Hash,
    DocVersion,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::Overload => "overload",
            Key::Ctx => "ctx",
            Key::Hash => "hash",
            Key::DocVersion => "docVersion",
        }
    }
}

#[derive(Default)]
struct Query {
    overload: Option<u32>,
    ctx: Option<u32>,
    hash: Option<String>,
    doc_version: Option<String>,
}

/// `query := "?" param ("&" param)*`, each of the `allowed` keys at most once.
fn query(lx: &mut Lexer, allowed: &[Key]) -> PResult<Query> {
    let mut q = Query::default();
    if lx.at_end() {
        return Ok(q);
    }
    lx.expect("?", "'?' or the end of the selector")?;
    loop {
        let at = lx.pos;
        let name = lx.until(b"=&");
        let Some(key) = allowed.iter().copied().find(|k| k.name() == name) else {
            let want: Vec<String> = allowed.iter().map(|k| format!("'{}='", k.name())).collect();
            return Err(lx.expected_at(at, &want.join(" or ")));
        };
        lx.expect("=", "'='")?;
        let vat = lx.pos;
        let value = lx.until(b"&");
        let dup = match key {
            Key::Overload => q.overload.replace(number(lx, value, vat)?).is_some(),
            Key::Ctx => q.ctx.replace(number(lx, value, vat)?).is_some(),
            Key::Hash => {
                let v = digest(lx, value, vat, "sha1:", 40)?;
                q.hash.replace(v).is_some()
            }
            Key::DocVersion => {
                let v = digest(lx, value, vat, "sha256:", 64)?;
                q.doc_version.replace(v).is_some()
            }
        };
        if dup {
            return Err(SelectorError::DuplicateKey {
                offset: at,
                key: key.name().into(),
            });
        }
        if !lx.eat("&") {
            return Ok(q);
        }
    }
}

fn number(lx: &Lexer, value: &str, at: usize) -> PResult<u32> {
    match value.parse::<u32>() {
        Ok(n) if value.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(lx.expected_at(at, "a non-negative integer")),
    }
}

fn digest(lx: &Lexer, value: &str, at: usize, prefix: &str, len: usize) -> PResult<String> {
    let ok = value
        .strip_prefix(prefix)
        .is_some_and(|h| h.len() == len && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(value.to_ascii_lowercase())
    } else {
        Err(lx.expected_at(at, &format!("'{prefix}' and {len} hex digits")))
    }
}

/// A selector path: percent-decoded, `file://` URIs turned into plain paths, Windows drive
/// letters uppercased (`file:///c:/x` → `C:/x`).
pub fn decode_path(raw: &str) -> Option<String> {
    let Some(rest) = raw.strip_prefix("file://") else {
        return percent_decode(raw);
    };
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let decoded = percent_decode(rest)?;
    let b = decoded.as_bytes();
    if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        let mut s = String::with_capacity(decoded.len());
        s.push(char::from(b[1].to_ascii_uppercase()));
        s.push_str(&decoded[2..]);
        return Some(s);
    }
    if !decoded.starts_with('/') {
        return None;
    }
    Some(decoded)
}
