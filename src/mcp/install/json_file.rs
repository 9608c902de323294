//! lanser's entry put into a JSON (or, for VS Code, JSONC) configuration file by splicing
//! text: the file is parsed to find where the server map and the entry are, and only the bytes
//! of the entry (or of the member inserted) change. Every other byte — other servers, other
//! keys, their order, indentation, comments — stays as it was.
//!
//! JSONC (comments, trailing commas) is read through a copy of equal length where those are
//! blanked to spaces, so that byte offsets in the copy are offsets in the file.

use super::{holds, Change, Edited, Entry, Malformed, NAME, OWNED};
use serde_json::Value;

/// One `"key": value` of an object, as byte offsets of the text.
struct Member {
    key: String,
    key_start: usize,
    key_end: usize,
    value_start: usize,
    value_end: usize,
}

/// `text` (empty when the file does not exist) with `servers_key.lanser` holding `entry`. An
/// existing lanser entry gets lanser's own keys set (or dropped) and keeps its other members,
/// their text as it was.
pub fn upsert(
    text: &str,
    jsonc: bool,
    servers_key: &str,
    entry: &Entry,
) -> Result<Edited, Malformed> {
    let strict = if jsonc {
        blank_comments(text)?
    } else {
        text.to_string()
    };
    let ours = |unit: &str, base: Option<&str>| {
        let pieces: Vec<(&str, String)> = entry.iter().map(|(k, v)| (*k, inline(v))).collect();
        object(&pieces, unit, base)
    };
    if strict.trim().is_empty() {
        let servers = object(&[(NAME, ours("  ", Some("    ")))], "  ", Some("  "));
        let text = format!("{}\n", object(&[(servers_key, servers)], "  ", Some("")));
        return Ok(added(text));
    }
    let doc: Value = serde_json::from_str(&strict).map_err(|e| Malformed::new(e.to_string()))?;
    if !doc.is_object() {
        return Err(Malformed::new("not a JSON object"));
    }
    let top_open = strict.find('{').expect("a JSON object has a '{'");
    let (top, top_close) = members(&strict, top_open);
    let unit = indent_unit(text, &top);
    let Some(servers) = top.iter().rev().find(|m| m.key == servers_key) else {
        let at = member_indent(text, top_open, &top, &unit);
        let inner = at.as_ref().map(|a| format!("{a}{unit}"));
        let value = object(
            &[(NAME, ours(&unit, inner.as_deref()))],
            &unit,
            at.as_deref(),
        );
        let text = insert(text, (top_open, top_close), &top, servers_key, &value, at);
        return Ok(added(text));
    };
    if !strict[servers.value_start..].starts_with('{') {
        return Err(Malformed::new(format!("{servers_key:?} is not an object")));
    }
    let (list, close) = members(&strict, servers.value_start);
    let Some(old) = list.iter().rev().find(|m| m.key == NAME) else {
        let at = member_indent(text, servers.value_start, &list, &unit);
        let value = ours(&unit, at.as_deref());
        let text = insert(text, (servers.value_start, close), &list, NAME, &value, at);
        return Ok(added(text));
    };
    let was: Value = serde_json::from_str(&strict[old.value_start..old.value_end])
        .expect("a member of a parsed document parses");
    let change = Change::Replaced {
        was: was.to_string(),
    };
    // An entry written on one line stays on one.
    let one_line = !text[old.value_start..old.value_end].contains('\n');
    let layout = (!one_line).then(|| line_indent(text, old.key_start));
    let value = match was.as_object() {
        Some(m) if holds(m, entry) => {
            return Ok(Edited {
                text: text.to_string(),
                change: Change::Same,
            })
        }
        Some(_) => {
            let (theirs, _) = members(&strict, old.value_start);
            let pieces = merged(text, &theirs, entry);
            object(&pieces, &unit, layout)
        }
        None => ours(&unit, layout),
    };
    Ok(Edited {
        text: splice(text, old.value_start..old.value_end, &value),
        change,
    })
}

fn added(text: String) -> Edited {
    Edited {
        text,
        change: Change::Added,
    }
}

/// The members of the replaced entry: the old members in their order, lanser's own keys with
/// `entry`'s values (or left out), the others as their text was; then `entry`'s keys the old
/// one lacked.
fn merged<'a>(text: &'a str, old: &[Member], entry: &'a Entry) -> Vec<(&'a str, String)> {
    let ours = |k: &str| entry.iter().find(|(e, _)| *e == k).map(|(_, v)| inline(v));
    let mut out: Vec<(&str, String)> = Vec::new();
    for m in old {
        let key = &text[m.key_start + 1..m.key_end - 1];
        match OWNED.iter().find(|o| **o == m.key) {
            Some(own) => out.extend(ours(own).map(|v| (*own, v))),
            None => out.push((key, text[m.value_start..m.value_end].to_string())),
        }
    }
    for (k, v) in entry {
        if !out.iter().any(|(o, _)| o == k) {
            out.push((k, inline(v)));
        }
    }
    out
}

/// A string, or a list of strings on one line.
pub fn inline(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(Value::to_string).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// An object of `members` (keys as they are spelled in JSON, without quotes; values as
/// text): one per line, indented `unit` beyond `base` (the indentation of the line it starts
/// on), or with no `base` all on one line.
fn object(members: &[(&str, String)], unit: &str, base: Option<&str>) -> String {
    let Some(base) = base else {
        let items: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        return format!("{{{}}}", items.join(", "));
    };
    let lines: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{base}{unit}\"{k}\": {v}"))
        .collect();
    format!("{{\n{}\n{base}}}", lines.join(",\n"))
}

/// How a member added to the object at `open` is laid out: the indentation of its line when
/// members are one per line (as the last one is, or one level in for an empty object), none
/// when they share a line.
fn member_indent(text: &str, open: usize, list: &[Member], unit: &str) -> Option<String> {
    match list.last() {
        Some(last) if on_own_line(text, last.key_start) => {
            Some(line_indent(text, last.key_start).to_string())
        }
        Some(_) => None,
        None => Some(format!("{}{unit}", line_indent(text, open))),
    }
}

/// `text` with `"key": value` added as the last member of the object whose braces are at
/// `braces`, on a line of its own indented `at`, or with none after the last member on its
/// line.
fn insert(
    text: &str,
    braces: (usize, usize),
    list: &[Member],
    key: &str,
    value: &str,
    at: Option<String>,
) -> String {
    let (open, close) = braces;
    let key = Value::String(key.to_string());
    let (pos, piece) = match (list.last(), at) {
        (Some(last), Some(indent)) => (last.value_end, format!(",\n{indent}{key}: {value}")),
        (Some(last), None) => (last.value_end, format!(", {key}: {value}")),
        (None, indent) => {
            let indent = indent.unwrap_or_default();
            if text[open + 1..close].trim().is_empty() {
                let outer = line_indent(text, open);
                let piece = format!("{{\n{indent}{key}: {value}\n{outer}}}");
                return splice(text, open..close + 1, &piece);
            }
            (open + 1, format!("\n{indent}{key}: {value}"))
        }
    };
    splice(text, pos..pos, &piece)
}

/// `text` with `range` replaced by `piece`, whose line ends are made the file's (CRLF when
/// the file has one).
fn splice(text: &str, range: std::ops::Range<usize>, piece: &str) -> String {
    let piece = match text.contains("\r\n") {
        true => piece.replace("\r\n", "\n").replace('\n', "\r\n"),
        false => piece.to_string(),
    };
    format!("{}{piece}{}", &text[..range.start], &text[range.end..])
}

/// The members of the object whose `{` is at `open` in valid JSON `s`, and where its `}` is.
fn members(s: &str, open: usize) -> (Vec<Member>, usize) {
    let b = s.as_bytes();
    let mut i = skip_ws(b, open + 1);
    let mut out = Vec::new();
    if b[i] == b'}' {
        return (out, i);
    }
    loop {
        let key_start = i;
        let key_end = skip_value(b, i);
        let key: String =
            serde_json::from_str(&s[key_start..key_end]).expect("a parsed object's key");
        i = skip_ws(b, key_end);
        debug_assert_eq!(b[i], b':');
        let value_start = skip_ws(b, i + 1);
        let value_end = skip_value(b, value_start);
        out.push(Member {
            key,
            key_start,
            key_end,
            value_start,
            value_end,
        });
        i = skip_ws(b, value_end);
        if b[i] == b'}' {
            return (out, i);
        }
        i = skip_ws(b, i + 1);
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end of the JSON value starting at `i` in valid JSON.
fn skip_value(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'"' => {
            let mut j = i + 1;
            while b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b[j] {
                    b'"' => {
                        j = skip_value(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            j
        }
    }
}

/// The whitespace before `at` on its line.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let line = &text[start..at];
    let end = line.len() - line.trim_start().len();
    &line[..end]
}

/// Whether only whitespace comes before `at` on its line.
fn on_own_line(text: &str, at: usize) -> bool {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    start > 0 && text[start..at].trim().is_empty()
}

/// One level of indentation as the file has it (the top object's members' indentation when
/// they are one per line), else two spaces.
fn indent_unit(text: &str, top: &[Member]) -> String {
    top.first()
        .filter(|m| on_own_line(text, m.key_start))
        .map(|m| line_indent(text, m.key_start))
        .filter(|u| !u.is_empty())
        .unwrap_or("  ")
        .to_string()
}

/// JSONC as JSON of the same length: comments and trailing commas blanked to spaces (newlines
/// kept).
fn blank_comments(text: &str) -> Result<String, Malformed> {
    let mut b = text.as_bytes().to_vec();
    let mut i = 0;
    // The last `,` outside strings and comments, still open: blanked if a `}` or `]` comes next.
    let mut comma: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                comma = None;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    b[i] = b' ';
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map(|n| i + 2 + n + 2)
                    .ok_or_else(|| Malformed::new("a /* comment is not closed"))?;
                for c in &mut b[i..end] {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                i = end;
                continue;
            }
            b',' => comma = Some(i),
            b'}' | b']' => {
                if let Some(c) = comma.take() {
                    b[c] = b' ';
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, each by an ASCII space, so the text is still UTF-8.
    Ok(String::from_utf8(b).expect("blanking ASCII keeps UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Entry {
        vec![("command", json!("/bin/lanser")), ("args", json!(["mcp"]))]
    }

    #[test]
    fn other_members_keep_their_bytes() {
        let text = "{\n    \"a\": [1,2],\n    \"mcpServers\": {\n        \"x\": {\"command\": \"y\"}\n    }\n}\n";
        let out = upsert(text, false, "mcpServers", &entry()).unwrap();
        assert!(matches!(out.change, Change::Added));
        assert_eq!(
            out.text,
            "{\n    \"a\": [1,2],\n    \"mcpServers\": {\n        \"x\": {\"command\": \"y\"},\n        \"lanser\": {\n            \"command\": \"/bin/lanser\",\n            \"args\": [\"mcp\"]\n        }\n    }\n}\n"
        );
        let again = upsert(&out.text, false, "mcpServers", &entry()).unwrap();
        assert!(matches!(again.change, Change::Same));
    }

    #[test]
    fn a_missing_map_and_an_empty_object_and_one_line() {
        let out = upsert("{}", false, "servers", &entry()).unwrap();
        assert_eq!(
            out.text,
            "{\n  \"servers\": {\n    \"lanser\": {\n      \"command\": \"/bin/lanser\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}"
        );
        let out = upsert("{\"a\":1}", false, "servers", &entry()).unwrap();
        assert_eq!(
            out.text,
            "{\"a\":1, \"servers\": {\"lanser\": {\"command\": \"/bin/lanser\", \"args\": [\"mcp\"]}}}"
        );
    }

    #[test]
    fn jsonc_comments_and_trailing_commas_stay() {
        let text =
            "{\n  // mine\n  \"servers\": {\n    \"x\": {\"url\": \"u\"}, /* c */\n  },\n}\n";
        let out = upsert(text, true, "servers", &entry()).unwrap();
        assert_eq!(
            out.text,
            "{\n  // mine\n  \"servers\": {\n    \"x\": {\"url\": \"u\"},\n    \"lanser\": {\n      \"command\": \"/bin/lanser\",\n      \"args\": [\"mcp\"]\n    }, /* c */\n  },\n}\n"
        );
        assert!(upsert(text, false, "servers", &entry()).is_err());
    }

    #[test]
    fn a_crlf_file_gets_crlf_lines() {
        let text = "{\r\n  \"servers\": {}\r\n}\r\n";
        let out = upsert(text, false, "servers", &entry()).unwrap();
        assert_eq!(
            out.text,
            "{\r\n  \"servers\": {\r\n    \"lanser\": {\r\n      \"command\": \"/bin/lanser\",\r\n      \"args\": [\"mcp\"]\r\n    }\r\n  }\r\n}\r\n"
        );
    }

    #[test]
    fn a_different_entry_is_replaced_keeping_its_other_keys() {
        let text = "{\"mcpServers\": {\"lanser\": {\"command\": \"old\", \"env\": {\"A\": \"1\"}, \"url\": \"u\"}}}";
        let out = upsert(text, false, "mcpServers", &entry()).unwrap();
        assert_eq!(
            out.text,
            "{\"mcpServers\": {\"lanser\": {\"command\": \"/bin/lanser\", \"env\": {\"A\": \"1\"}, \"args\": [\"mcp\"]}}}"
        );
        assert!(matches!(out.change, Change::Replaced { .. }));
    }
}
