//! Symbol-level edits as text (`lanser edit`, docs/editing.md): where in a file a definition's
//! replacement, new body, new sibling or deletion goes, and the given code shaped to fit —
//! dedented, then indented to the target's own level (its line's indentation, not the file's
//! default) with its nested levels in the target's unit ([`super::indent`]), siblings separated by blank lines as the language's style has it (Python: two
//! at the top level, one inside a class; one elsewhere). Pure text: nothing here reads files.

use super::indent::{self, leading};
use crate::error::{LanserError, Result};

/// What to do to the definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Everything after the header's `:` (Python: docstring included) or between `{` and `}`.
    ReplaceBody,
    /// The whole definition, decorators included.
    Replace,
    /// A new sibling before it (before its decorators).
    InsertBefore,
    /// A new sibling after it.
    InsertAfter,
    /// The definition and the blank lines that separated it.
    Delete,
}

impl Mode {
    /// The flag's name (`replace-body`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::ReplaceBody => "replace-body",
            Mode::Replace => "replace",
            Mode::InsertBefore => "insert-before",
            Mode::InsertAfter => "insert-after",
            Mode::Delete => "delete",
        }
    }
}

/// A definition in its file, as byte offsets.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub text: &'a str,
    /// Where its code starts: its line's start when only blanks precede it there.
    pub start: usize,
    /// Where its header ends (after the `:` or `{` that opens the body).
    pub header_end: usize,
    /// Where its code ends.
    pub end: usize,
    /// Python's style (two blank lines around top-level definitions).
    pub python: bool,
}

/// The byte span of `t.text` to replace and its replacement.
pub fn splice(t: &Target, mode: Mode, given: &str) -> Result<(usize, usize, String)> {
    let text = t.text;
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let indent = leading(line_of(text, t.start));
    let blanks = match t.python && indent.is_empty() {
        true => 2,
        false => 1,
    };
    let fit = |indent: &str, unit: &str| Fit {
        indent: indent.to_string(),
        unit: unit.to_string(),
        python: t.python,
        eol,
    };
    if mode != Mode::Delete && given.trim().is_empty() {
        return Err(LanserError::usage(format!(
            "--{}: the given text is empty (use --delete to remove a definition)",
            mode.name()
        )));
    }
    let (body_indent, unit) = inner(t, indent);
    let sibling = fit(indent, &unit);
    Ok(match mode {
        Mode::Replace => (t.start, t.end, reindent(given, &sibling)),
        Mode::InsertBefore => {
            let code = reindent(given, &sibling);
            (
                t.start,
                t.start,
                format!("{code}{}", eol.repeat(1 + blanks)),
            )
        }
        Mode::InsertAfter => {
            let code = reindent(given, &sibling);
            (t.end, t.end, format!("{}{code}", eol.repeat(1 + blanks)))
        }
        Mode::ReplaceBody => body(t, indent, given, &fit(&body_indent, &unit))?,
        Mode::Delete => deletion(t),
    })
}

/// The new body between the header and the end (a closing `}` kept), shaped by `fit` (the
/// body's own indentation).
fn body(t: &Target, indent: &str, given: &str, fit: &Fit) -> Result<(usize, usize, String)> {
    let text = t.text;
    let header = &text[..t.header_end];
    let braces = braces(t);
    if !braces && !header.ends_with(':') {
        return Err(LanserError::usage(
            "--replace-body: the definition has no body (its header opens none with `:` or `{`)",
        ));
    }
    let end = if braces { t.end - 1 } else { t.end };
    let code = reindent(given, fit);
    let eol = fit.eol;
    let new = match braces {
        true => format!("{eol}{code}{eol}{indent}"),
        false => format!("{eol}{code}"),
    };
    Ok((t.header_end, end, new))
}

/// Whether the definition's body is between `{` and `}`.
fn braces(t: &Target) -> bool {
    t.text[..t.header_end].ends_with('{') && t.text[..t.end].ends_with('}')
}

/// The indentation of the definition's body and the unit its code steps in by: the body's
/// first non-blank line after the header's line, when deeper than the definition (the unit is
/// the difference); else one level deeper, by the file's unit (a tab where the definition is
/// indented with tabs and the file shows none).
fn inner(t: &Target, indent: &str) -> (String, String) {
    let braces = braces(t);
    let opens = braces || t.text[..t.header_end].ends_with(':');
    let end = if braces { t.end - 1 } else { t.end };
    let existing = t.text[t.header_end.min(end)..end]
        .split_inclusive('\n')
        .skip(1)
        .find(|l| !(l.trim().is_empty() || (braces && l.trim() == "}")))
        .map(leading)
        .filter(|b| opens && b.len() > indent.len());
    if let Some(step) = existing.and_then(|b| b.strip_prefix(indent)) {
        return (existing.unwrap_or_default().to_string(), step.to_string());
    }
    let unit = indent::unit_of_file(t.text, t.python).unwrap_or_else(|| {
        match indent.contains('\t') {
            true => "\t",
            false => "    ",
        }
        .to_string()
    });
    let body = existing.map_or_else(|| format!("{indent}{unit}"), str::to_string);
    (body, unit)
}

/// The definition's whole lines and the blank lines that set it apart: those before it when
/// anything precedes it, else those after it.
fn deletion(t: &Target) -> (usize, usize, String) {
    let text = t.text;
    let mut end = text[t.end..]
        .find('\n')
        .map_or(text.len(), |i| t.end + i + 1);
    let blank = |c: char| c.is_whitespace();
    let kept = text[..t.start].trim_end_matches(blank).len();
    let start = if kept > 0 {
        text[kept..]
            .find('\n')
            .map_or(t.start, |i| kept + i + 1)
            .min(t.start)
    } else {
        let rest = text[end..].trim_start_matches(blank).len();
        let next = text.len() - rest;
        // Up to the start of the next non-blank line.
        end = text[..next].rfind('\n').map_or(end, |i| (i + 1).max(end));
        t.start
    };
    (start, end, String::new())
}

/// The line holding byte `at`, without its line break.
fn line_of(text: &str, at: usize) -> &str {
    let s = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let e = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[s..e]
}

/// How given code is shaped to its place: the indentation of its first level, the unit the
/// place's code steps in by, the language, the file's line break.
pub struct Fit {
    pub indent: String,
    pub unit: String,
    pub python: bool,
    pub eol: &'static str,
}

/// `given` without its surrounding blank lines and common indentation, its nested levels
/// re-leveled from its own unit to `fit.unit` ([`indent::relevel`]), each non-blank line then
/// indented by `fit.indent`, lines joined by `fit.eol` (no final line break).
pub fn reindent(given: &str, fit: &Fit) -> String {
    let lines: Vec<&str> = given
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .skip_while(|l| l.trim().is_empty())
        .collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(0);
    let lines = &lines[..=last.min(lines.len().saturating_sub(1))];
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| leading(l))
        .reduce(|a, b| {
            let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            &a[..n]
        })
        .unwrap_or("");
    let dedented: Vec<&str> = lines
        .iter()
        .map(|l| match l.trim().is_empty() {
            true => "",
            false => l[common.len()..].trim_end(),
        })
        .collect();
    let own = indent::unit_of(&dedented, fit.python).unwrap_or_default();
    indent::relevel(&dedented, &own, &fit.unit, fit.python)
        .iter()
        .map(|l| match l.is_empty() {
            true => String::new(),
            false => format!("{}{l}", fit.indent),
        })
        .collect::<Vec<_>>()
        .join(fit.eol)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "import os\n\n\ndef f(a):\n    \"\"\"Doc.\"\"\"\n    return a\n\n\nclass C:\n  def m(self):\n    return 1\n\n  def n(self):\n    return 2\n";

    fn target<'a>(text: &'a str, header: &str, last: &str) -> Target<'a> {
        let h = text.find(header).unwrap();
        let start = text[..h].rfind('\n').map_or(0, |i| i + 1);
        let header_end = h + text[h..].find(":\n").unwrap() + 1;
        let end = text[h..].find(last).unwrap() + h + last.len();
        Target {
            text,
            start,
            header_end,
            end,
            python: true,
        }
    }

    fn edited(t: &Target, mode: Mode, given: &str) -> String {
        let (s, e, new) = splice(t, mode, given).unwrap();
        format!("{}{new}{}", &t.text[..s], &t.text[e..])
    }

    #[test]
    fn a_body_takes_the_methods_own_indentation() {
        let t = target(SRC, "def m(", "return 1");
        let out = edited(&t, Mode::ReplaceBody, "        x = 3\n        return x\n");
        assert!(
            out.contains("  def m(self):\n    x = 3\n    return x\n\n  def n"),
            "{out}"
        );
        let t = target(SRC, "def f(", "return a");
        let out = edited(&t, Mode::ReplaceBody, "return 2 * a");
        assert!(
            out.contains("def f(a):\n    return 2 * a\n\n\nclass C"),
            "{out}"
        );
    }

    #[test]
    fn siblings_are_set_apart_as_the_style_has_it() {
        let t = target(SRC, "def m(", "return 1");
        let out = edited(&t, Mode::InsertAfter, "def k(self):\n  return 0");
        assert!(
            out.contains("    return 1\n\n  def k(self):\n    return 0\n\n  def n"),
            "{out}"
        );
        let t = target(SRC, "def f(", "return a");
        let out = edited(&t, Mode::InsertBefore, "def g():\n    pass\n");
        assert!(
            out.contains("import os\n\n\ndef g():\n    pass\n\n\ndef f(a)"),
            "{out}"
        );
    }

    #[test]
    fn a_delete_takes_its_separating_blank_lines() {
        let t = target(SRC, "def n(", "return 2");
        assert!(edited(&t, Mode::Delete, "").ends_with("    return 1\n"));
        let t = target(SRC, "def f(", "return a");
        let out = edited(&t, Mode::Delete, "");
        assert_eq!(
            out,
            SRC.replace("\n\n\ndef f(a):\n    \"\"\"Doc.\"\"\"\n    return a", "")
        );
        let t = target(SRC, "import os", "import os");
        let t = Target {
            header_end: t.start,
            ..t
        };
        assert!(edited(&t, Mode::Delete, "").starts_with("def f(a):"));
    }

    #[test]
    fn nested_levels_take_the_targets_unit() {
        // Class C steps by two: a method written by four (at column 0, or already indented by
        // four, or by tabs) is re-leveled to two, its nested block and continuation with it.
        let t = target(SRC, "def m(", "return 1");
        let by_four =
            "def k(self):\n    if self:\n        return f(1,\n                 2)\n    return 0\n";
        let want = "    return 1\n\n  def k(self):\n    if self:\n      return f(1,\n               2)\n    return 0\n\n  def n";
        for given in [
            by_four.to_string(),
            by_four
                .replace('\n', "\n    ")
                .replacen("def", "    def", 1),
            "def k(self):\n\tif self:\n\t\treturn f(1,\n\t\t         2)\n\treturn 0\n".into(),
        ] {
            let out = edited(&t, Mode::InsertAfter, &given);
            assert!(out.contains(want), "{given:?}:\n{out}");
        }
        // A body by tabs into f (by four): spaces, four per level.
        let t = target(SRC, "def f(", "return a");
        let out = edited(&t, Mode::ReplaceBody, "if a:\n\treturn 1\nreturn 2\n");
        assert!(
            out.contains("def f(a):\n    if a:\n        return 1\n    return 2\n\n\nclass"),
            "{out}"
        );
        // A method of a tab-indented class, replaced by code written by two: tabs.
        let tabs = "class T:\n\tdef m(self):\n\t\treturn 1\n";
        let t = target(tabs, "def m(", "return 1");
        let out = edited(
            &t,
            Mode::Replace,
            "def m(self):\n  if self:\n    return 2\n",
        );
        assert_eq!(
            out,
            "class T:\n\tdef m(self):\n\t\tif self:\n\t\t\treturn 2\n"
        );
        // A one-line definition has no body to read the unit from: the file's (two) is used.
        let one = "class C:\n  def m(self): return 1\n\n  def n(self):\n    return 2\n";
        let t = Target {
            header_end: one.find("): ").unwrap() + 2,
            ..target(one, "def m(", "return 1")
        };
        let out = edited(&t, Mode::ReplaceBody, "if self:\n    return 3");
        assert!(
            out.starts_with("class C:\n  def m(self):\n    if self:\n      return 3\n"),
            "{out}"
        );
    }

    #[test]
    fn braces_keep_their_closing_brace() {
        let text = "function f() {\n  return 1;\n}\n";
        let t = Target {
            text,
            start: 0,
            header_end: text.find('{').unwrap() + 1,
            end: text.rfind('}').unwrap() + 1,
            python: false,
        };
        assert_eq!(
            edited(&t, Mode::ReplaceBody, "return 2;"),
            "function f() {\n  return 2;\n}\n"
        );
    }
}
