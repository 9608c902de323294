//! Unified diffs an agent proposes (`git diff`, `diff -u`): parsed into per-file hunks and
//! applied in memory to the current text, every context and removed line checked exactly.
//! Used by `lanser check --patch` for speculative diagnostics and by `lanser apply --patch`
//! (which writes through the envelope, not here); nothing here writes files.

use crate::error::{ErrorCode, LanserError, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Its header line as given (`@@ -3,4 +3,5 @@`), naming it in errors.
    pub header: String,
    /// 1-based first line of the old side (0 when the old side is empty).
    pub old_start: usize,
    /// Lines with their one-character prefix (' ', '-', '+') and without the line break.
    pub lines: Vec<String>,
    /// The old (resp. new) side's last line has no final newline.
    pub old_no_eol: bool,
    pub new_no_eol: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// Path as in the `+++` header, `b/` prefix removed.
    pub path: String,
    pub hunks: Vec<Hunk>,
}

fn bad(line: usize, what: &str) -> LanserError {
    LanserError::usage(format!("bad patch at line {line}: {what}"))
}

fn strip_prefix(p: &str) -> String {
    let p = p.split('\t').next().unwrap_or(p).trim_end();
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
        .to_string()
}

/// Parse a unified diff. Creations and deletions (`/dev/null`) are refused.
pub fn parse(text: &str) -> Result<Vec<FilePatch>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let new = lines
                .get(i + 1)
                .and_then(|l| l.strip_prefix("+++ "))
                .ok_or_else(|| bad(i + 2, "expected '+++' after '---'"))?;
            if old.starts_with("/dev/null") || new.starts_with("/dev/null") {
                return Err(bad(
                    i + 1,
                    "creating or deleting files is not supported by check --patch",
                ));
            }
            files.push(FilePatch {
                path: strip_prefix(new),
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@ -") {
            let file = files
                .last_mut()
                .ok_or_else(|| bad(i + 1, "hunk before any file header"))?;
            let (hunk, next) = parse_hunk(&lines, i, rest)?;
            file.hunks.push(hunk);
            i = next;
            continue;
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(LanserError::usage(
            "the patch names no file (no '---'/'+++' headers)",
        ));
    }
    Ok(files)
}

/// The hunk whose header (after `@@ -`) is `rest`, on line `i`: it and the index of the line
/// after it (its "\ No newline at end of file" markers included).
fn parse_hunk(lines: &[&str], mut i: usize, rest: &str) -> Result<(Hunk, usize)> {
    let (old, rest) = rest
        .split_once(' ')
        .ok_or_else(|| bad(i + 1, "bad hunk header"))?;
    let (new, _) = rest
        .strip_prefix('+')
        .and_then(|r| r.split_once(' '))
        .ok_or_else(|| bad(i + 1, "bad hunk header"))?;
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old).ok_or_else(|| bad(i + 1, "bad old range"))?;
    let (_, new_len) = range(new).ok_or_else(|| bad(i + 1, "bad new range"))?;
    let header = match lines[i].match_indices("@@").nth(1) {
        Some((end, _)) => lines[i][..end + 2].to_string(),
        None => lines[i].trim_end().to_string(),
    };
    let mut hunk = Hunk {
        header,
        old_start,
        lines: Vec::new(),
        old_no_eol: false,
        new_no_eol: false,
    };
    let (mut o, mut n) = (0, 0);
    i += 1;
    while (o < old_len || n < new_len) && i < lines.len() {
        let l = lines[i];
        match l.chars().next() {
            Some(' ') => {
                o += 1;
                n += 1;
            }
            Some('-') => o += 1,
            Some('+') => n += 1,
            // An empty context line whose leading space was stripped by an editor.
            None => {
                o += 1;
                n += 1;
            }
            Some('\\') => {
                i += 1;
                continue;
            }
            _ => return Err(bad(i + 1, "expected ' ', '-' or '+' in a hunk")),
        }
        hunk.lines.push(if l.is_empty() {
            " ".to_string()
        } else {
            l.to_string()
        });
        i += 1;
    }
    if o != old_len || n != new_len {
        return Err(bad(i, "hunk shorter than its header says"));
    }
    // "\ No newline at end of file" after the last old/new line.
    while lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        match hunk.lines.last().and_then(|l| l.chars().next()) {
            Some('-') => hunk.old_no_eol = true,
            Some('+') => hunk.new_no_eol = true,
            _ => {
                hunk.old_no_eol = true;
                hunk.new_no_eol = true;
            }
        }
        i += 1;
    }
    Ok((hunk, i))
}

/// Apply one file's hunks to `text`; a context or removed line that does not match is
/// `E/APPLY_CONFLICT` naming the line.
pub fn apply(path: &str, text: &str, patch: &FilePatch) -> Result<String> {
    apply_hunks(text, patch).map_err(|s| conflict(path, s.line, s.what))
}

/// [`apply`] for a patch that is to be written: a hunk that does not match is refused whole,
/// the error naming the file and the hunk's header.
pub fn apply_named(path: &str, text: &str, patch: &FilePatch) -> Result<String> {
    apply_hunks(text, patch).map_err(|s| {
        LanserError::new(
            ErrorCode::ApplyConflict,
            format!(
                "stale hunk {} in {path}: line {} {}; the patch was refused whole, nothing was written",
                patch.hunks[s.hunk].header, s.line, s.what
            ),
        )
    })
}

/// Where a hunk did not match: its index, the 1-based line of the file, and how.
struct Stale {
    hunk: usize,
    line: usize,
    what: &'static str,
}

fn apply_hunks(text: &str, patch: &FilePatch) -> std::result::Result<String, Stale> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut old: Vec<&str> = text.split_inclusive('\n').collect();
    let ends_with_newline = text.ends_with('\n');
    let content = |l: &str| l.trim_end_matches('\n').trim_end_matches('\r').to_string();
    let mut out: Vec<String> = Vec::new();
    let mut at = 0usize;
    let mut last_has_eol = ends_with_newline;
    for (hunk, h) in patch.hunks.iter().enumerate() {
        let stale = |line: usize, what: &'static str| Stale { hunk, line, what };
        let start = h.old_start.saturating_sub(1).max(at);
        let start = if h.old_start == 0 { at } else { start };
        if start > old.len() {
            return Err(stale(h.old_start, "past the end of the file"));
        }
        out.extend(old[at..start].iter().map(|s| s.to_string()));
        let mut cur = start;
        for l in &h.lines {
            let (tag, body) = l.split_at(1);
            let body = body.trim_end_matches('\r');
            match tag {
                " " | "-" => {
                    let Some(existing) = old.get(cur) else {
                        return Err(stale(cur + 1, "past the end of the file"));
                    };
                    if content(existing) != body {
                        return Err(stale(cur + 1, "does not match the patch"));
                    }
                    if tag == " " {
                        out.push(existing.to_string());
                    }
                    cur += 1;
                }
                _ => out.push(format!("{body}{eol}")),
            }
        }
        at = cur;
        if at == old.len() {
            last_has_eol = !h.new_no_eol;
        }
    }
    out.extend(old.drain(at..).map(|s| s.to_string()));
    let mut joined = out.concat();
    if !last_has_eol && joined.ends_with('\n') {
        joined.truncate(joined.trim_end_matches('\n').trim_end_matches('\r').len());
    }
    Ok(joined)
}

fn conflict(path: &str, line: usize, what: &str) -> LanserError {
    LanserError::new(
        ErrorCode::ApplyConflict,
        format!("the patch does not apply to {path}: line {line} {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_applies_a_git_diff() {
        let old = "a\nb\nc\nd\n";
        let patch = "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
        let files = parse(patch).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "x.py");
        assert_eq!(apply("x.py", old, &files[0]).unwrap(), "a\nB\nc\nd\n");
    }

    #[test]
    fn keeps_crlf_and_reports_mismatches() {
        let old = "a\r\nb\r\n";
        let files = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n+z\n b\n").unwrap();
        assert_eq!(apply("x", old, &files[0]).unwrap(), "a\r\nz\r\nb\r\n");
        let files = parse("--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-q\n+r\n").unwrap();
        let e = apply("x", old, &files[0]).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApplyConflict);
        assert!(e.message.contains("line 1 does not match"), "{}", e.message);
    }

    #[test]
    fn a_stale_hunk_is_named_by_file_and_header() {
        let old = "a\nb\nc\nd\ne\n";
        let patch = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -4,2 +4,2 @@ def f():\n-q\n+Q\n e\n";
        let files = parse(patch).unwrap();
        assert_eq!(files[0].hunks[1].header, "@@ -4,2 +4,2 @@");
        let e = apply_named("x.py", old, &files[0]).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApplyConflict);
        assert!(
            e.message
                .starts_with("stale hunk @@ -4,2 +4,2 @@ in x.py: line 4 does not match"),
            "{}",
            e.message
        );
    }

    #[test]
    fn no_newline_at_end_of_file() {
        let files = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n").unwrap();
        assert_eq!(apply("x", "a", &files[0]).unwrap(), "b");
    }

    #[test]
    fn round_trips_with_the_diff_lanser_writes() {
        let old = "x = 1\ny = x\nz = y\n";
        let new = "x = 1\ny = 2 * x\nz = y\n";
        let diff = crate::edits::unified("m.py", old, new);
        let files = parse(&diff).unwrap();
        assert_eq!(apply("m.py", old, &files[0]).unwrap(), new);
    }

    #[test]
    fn refuses_creation() {
        assert!(parse("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n").is_err());
        assert!(parse("no headers here").is_err());
    }
}
