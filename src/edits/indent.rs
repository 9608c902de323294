//! Indentation units for symbol edits (`lanser edit`): one level of a text's code (a tab or
//! N spaces), read from the code itself, and code re-leveled from one unit to another. Only a
//! statement's first line is re-leveled; the lines that continue it (inside brackets or a
//! multi-line string, after a backslash) move with it, so alignment and string contents
//! keep their place relative to it. Pure text.

/// Where each line of some code stands: whether it starts a statement (else it continues the
/// one before: inside brackets, a multi-line string, or after a trailing backslash).
pub fn statement_starts(lines: &[&str], python: bool) -> Vec<bool> {
    let mut scan = Scan {
        python,
        depth: 0,
        string: None,
        backslash: false,
    };
    lines
        .iter()
        .map(|l| {
            let starts = scan.depth == 0 && scan.string.is_none() && !scan.backslash;
            scan.line(l);
            starts
        })
        .collect()
}

/// The lexical state carried from one line to the next.
struct Scan {
    python: bool,
    /// Open brackets: `(` `[` (and `{` in Python, where braces do not open blocks).
    depth: usize,
    /// The closing delimiter of an open multi-line string.
    string: Option<&'static str>,
    backslash: bool,
}

impl Scan {
    fn line(&mut self, line: &str) {
        let b = line.as_bytes();
        let mut i = 0;
        self.backslash = false;
        while i < b.len() {
            if let Some(close) = self.string {
                match line[i..].find(close) {
                    Some(at) => {
                        i += at + close.len();
                        self.string = None;
                        continue;
                    }
                    None => return,
                }
            }
            let rest = &line[i..];
            match b[i] {
                b'#' if self.python => return,
                b'/' if !self.python && rest.starts_with("//") => return,
                b'\\' if i + 1 == b.len() => self.backslash = true,
                b'(' | b'[' => self.depth += 1,
                b'{' if self.python => self.depth += 1,
                b')' | b']' => self.depth = self.depth.saturating_sub(1),
                b'}' if self.python => self.depth = self.depth.saturating_sub(1),
                b'`' if !self.python => {
                    self.string = Some("`");
                }
                q @ (b'"' | b'\'') => {
                    let triple = if q == b'"' { "\"\"\"" } else { "'''" };
                    if self.python && rest.starts_with(triple) {
                        self.string = Some(triple);
                        i += 3;
                        continue;
                    }
                    i += 1 + single_quoted(&rest[1..], q);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The length of a one-line string's rest, its closing quote included (the line's rest when
/// it is not closed).
fn single_quoted(rest: &str, quote: u8) -> usize {
    let b = rest.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// A line's leading blanks.
pub fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// One level of `lines`' code: a tab when the first indented statement line starts with one,
/// else the narrowest indentation of a statement line; `None` when no statement is indented.
pub fn unit_of(lines: &[&str], python: bool) -> Option<String> {
    let starts = statement_starts(lines, python);
    let leads: Vec<&str> = lines
        .iter()
        .zip(starts)
        .filter(|(l, s)| *s && !l.trim().is_empty())
        .map(|(l, _)| leading(l))
        .filter(|l| !l.is_empty())
        .collect();
    if leads.first()?.starts_with('\t') {
        return Some("\t".into());
    }
    let narrowest = leads
        .iter()
        .filter(|l| !l.contains('\t'))
        .map(|l| l.len())
        .min()?;
    Some(" ".repeat(narrowest))
}

/// The unit a file's blocks step in by: the most frequent step from a statement line that
/// opens a block (ends with `:` in Python, `{` elsewhere) to the next non-blank line, when
/// that line is indented deeper on the same leading blanks.
pub fn unit_of_file(text: &str, python: bool) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let starts = statement_starts(&lines, python);
    let opener = if python { ':' } else { '{' };
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !starts[i] || !l.trim_end().ends_with(opener) {
            continue;
        }
        let Some(next) = lines[i + 1..].iter().find(|n| !n.trim().is_empty()) else {
            continue;
        };
        let (here, there) = (leading(l), leading(next));
        let Some(step) = there.strip_prefix(here).filter(|s| !s.is_empty()) else {
            continue;
        };
        match counts.iter_mut().find(|(s, _)| s == step) {
            Some((_, n)) => *n += 1,
            None => counts.push((step.to_string(), 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(s, _)| s)
}

/// `lead` in levels of `from` (a tab counts as one level whatever the unit), the rest kept:
/// the same depth in levels of `to`.
fn relevel_lead(lead: &str, from: &str, to: &str) -> String {
    let mut rest = lead;
    let mut levels = 0;
    loop {
        if let Some(r) = rest.strip_prefix(from) {
            rest = r;
        } else if let Some(r) = rest.strip_prefix('\t') {
            rest = r;
        } else {
            break;
        }
        levels += 1;
    }
    format!("{}{rest}", to.repeat(levels))
}

/// `lines` (dedented code) with every statement line's indentation re-leveled from `from`
/// to `to`, and every continuation line moved as its statement's first line was (kept where
/// it is when it starts left of that line's old indentation).
pub fn relevel(lines: &[&str], from: &str, to: &str, python: bool) -> Vec<String> {
    if from == to || from.is_empty() {
        return lines.iter().map(|l| l.to_string()).collect();
    }
    let starts = statement_starts(lines, python);
    let (mut old, mut new) = (String::new(), String::new());
    lines
        .iter()
        .zip(starts)
        .map(|(l, start)| {
            let lead = leading(l);
            if start && !l.trim().is_empty() {
                old = lead.to_string();
                new = relevel_lead(lead, from, to);
                format!("{new}{}", &l[lead.len()..])
            } else {
                match l.strip_prefix(old.as_str()) {
                    Some(rest) if !l.trim().is_empty() => format!("{new}{rest}"),
                    _ => l.to_string(),
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuations_are_not_statements() {
        let code = [
            "x = f(a,",
            "      b)",
            "s = \"\"\"one",
            "  two\"\"\"",
            "y = 1 + \\",
            "    2",
            "z = '(' # (",
            "w = {",
            "  1: 2}",
        ];
        assert_eq!(
            statement_starts(&code, true),
            [true, false, true, false, true, false, true, true, false]
        );
        // Elsewhere braces open blocks: the lines inside them are statements.
        let ts = ["if (a) {", "  f(`x", "y`);", "  g(); // (", "}"];
        assert_eq!(
            statement_starts(&ts, false),
            [true, true, false, true, true]
        );
    }

    #[test]
    fn units_are_read_from_the_code() {
        assert_eq!(
            unit_of(&["def f():", "  return 1"], true).as_deref(),
            Some("  ")
        );
        assert_eq!(
            unit_of(&["if a:", "\tif b:", "\t\tc()"], true).as_deref(),
            Some("\t")
        );
        assert_eq!(unit_of(&["x = f(a,", "      b)"], true), None);
        let file = "class C:\n  def m(self):\n    pass\n\n  def n(self):\n    if x:\n      pass\n";
        assert_eq!(unit_of_file(file, true).as_deref(), Some("  "));
        assert_eq!(unit_of_file("x = 1\n", true), None);
    }

    #[test]
    fn statements_are_releveled_and_continuations_follow() {
        let code = [
            "def k(self):",
            "    \"\"\"Doc.",
            "",
            "    More.",
            "    \"\"\"",
            "    if self.w:",
            "        return f(1,",
            "                 2)",
            "\treturn 0",
        ];
        let got = relevel(&code, "    ", "  ", true);
        assert_eq!(
            got,
            [
                "def k(self):",
                "  \"\"\"Doc.",
                "",
                "  More.",
                "  \"\"\"",
                "  if self.w:",
                "    return f(1,",
                "             2)",
                "  return 0",
            ]
        );
        assert_eq!(
            relevel(&["if a:", "  b"], "  ", "\t", true),
            ["if a:", "\tb"]
        );
    }
}
