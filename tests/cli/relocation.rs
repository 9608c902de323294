//! The relocation suite: take durable selectors for targets in srcpkg's geometry.py (from
//! `lanser locate` on the pristine copy), apply real edits to a copy, and check that every
//! symbol, AST, anchor and stale-cursor selector lands on the same construct — found by
//! searching the edited text — or says it is unsure (E/AMBIGUOUS, or `ambiguous: true`).
//! A confident wrong answer fails the test. The hit rate is printed.

use crate::selectors::{line_after, locate_in};
use crate::support::*;

const GEO: &str = "src/shapes/geometry.py";

struct Target {
    /// `py://` qualname and query.
    py: &'static str,
    /// The ast path, when the target has one (an overload has none).
    ast: Option<&'static str>,
    /// Where the construct's header is: first `needle` after the first `after`.
    after: &'static str,
    needle: &'static str,
}

const TARGETS: &[Target] = &[
    Target {
        py: "Circle.area",
        ast: Some("[class=Circle]/[def=area]"),
        after: "class Circle",
        needle: "def area(",
    },
    Target {
        py: "Square.Corner.__init__",
        ast: Some("[class=Square]/[class=Corner]/[def=__init__]"),
        after: "class Corner",
        needle: "def __init__(",
    },
    Target {
        py: "Shape.name",
        ast: Some("[class=Shape]/[def=name]"),
        after: "class Shape",
        needle: "def name(",
    },
    Target {
        py: "Circle.diameter",
        ast: Some("[class=Circle]/[def=diameter]"),
        after: "class Circle",
        needle: "def diameter(",
    },
    Target {
        py: "scale?overload=1",
        ast: None,
        after: "",
        needle: "def scale(value: float",
    },
    Target {
        py: "fetch_shape",
        ast: Some("[def=fetch_shape]"),
        after: "",
        needle: "async def fetch_shape(",
    },
    Target {
        py: "area_of",
        ast: Some("[def=area_of]"),
        after: "",
        needle: "def area_of(",
    },
    Target {
        py: "DEFAULT_RADIUS",
        ast: Some("[assign=DEFAULT_RADIUS]"),
        after: "",
        needle: "DEFAULT_RADIUS:",
    },
];

/// A Python block (a line and the more-indented or blank lines after it) starting at the
/// first line that contains `header`.
fn cut_block(text: &str, header: &str) -> (String, String) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let i = lines.iter().position(|l| l.contains(header)).unwrap();
    let indent = lines[i].len() - lines[i].trim_start().len();
    let mut j = i + 1;
    while j < lines.len()
        && (lines[j].trim().is_empty() || lines[j].len() - lines[j].trim_start().len() > indent)
    {
        j += 1;
    }
    let block: String = lines[i..j].concat();
    let rest: String = lines[..i].concat() + &lines[j..].concat();
    (block, rest)
}

fn insert_above(t: &str) -> String {
    t.replacen(
        "\"\"\"\n",
        "\"\"\"\n\nimport os\nimport sys\n\nVERSION = (1, 2)\n",
        1,
    )
}

fn delete_above(t: &str) -> String {
    t.replacen("import asyncio\n", "", 1)
        .replacen("from typing import overload\n\n", "", 1)
}

/// Two-space indentation and no spaces around `->`.
fn reformat(t: &str) -> String {
    t.split_inclusive('\n')
        .map(|l| {
            let n = l.len() - l.trim_start_matches(' ').len();
            format!("{}{}", " ".repeat(n / 2), &l[n..]).replace(" -> ", "->")
        })
        .collect()
}

fn similar_siblings(t: &str) -> String {
    let t = t.replacen(
        "    def __init__(self, radius: float) -> None:\n",
        "    def area_cm(self) -> float:\n        return self.area()\n\n    def __init__(self, radius: float) -> None:\n",
        1,
    );
    t + "\n\ndef area_of_all(shapes: list[Shape]) -> float:\n    return sum(area_of(s) for s in shapes)\n\n\nDEFAULT_RADIUS_CM: float = 1.0\n"
}

/// `area_of` to the end of the file; `Circle.area` below `Circle.unit`.
fn move_functions(t: &str) -> String {
    let (block, rest) = cut_block(t, "def area_of(");
    let rest = rest + "\n\n" + block.trim_end() + "\n";
    let start = rest.find("class Circle").unwrap();
    let (area, rest2) = cut_block(&rest[start..], "def area(");
    let rest2 = rest2.replacen(
        "        return cls(DEFAULT_RADIUS)\n",
        &format!(
            "        return cls(DEFAULT_RADIUS)\n\n{}",
            area.trim_end_matches('\n').to_string() + "\n"
        ),
        1,
    );
    rest[..start].to_string() + &rest2
}

fn rename_unrelated(t: &str) -> String {
    t.replace("round_to_precision", "round_prec")
        .replace(".side", ".length")
}

/// Edits the targets' own header lines: anchors on them can only match fuzzily.
fn retype_headers(t: &str) -> String {
    t.replace("(self)", "(this)")
        .replace("-> float:", "-> Real:")
        .replace("factor: float)", "factor: float, *, exact: bool = False)")
        .replace("DEFAULT_RADIUS: float", "DEFAULT_RADIUS: Real")
}

fn everything(t: &str) -> String {
    reformat(&move_functions(&insert_above(t)))
}

/// (name, edit, whether it keeps every target's signature shape and so its symbolId).
#[allow(clippy::type_complexity)]
const EDITS: &[(&str, fn(&str) -> String, bool)] = &[
    ("insert lines above", insert_above, true),
    ("delete lines above", delete_above, true),
    ("reformat", reformat, true),
    ("add similar siblings", similar_siblings, true),
    ("move functions", move_functions, true),
    ("rename unrelated symbols", rename_unrelated, true),
    ("retype the targets' headers", retype_headers, false),
    ("all of insert, move, reformat", everything, true),
];

#[derive(Default)]
struct Tally {
    hit: usize,
    unsure: usize,
    lost: usize,
    total: usize,
}

#[test]
fn selectors_survive_real_edits_or_say_they_are_unsure() {
    let home = tempfile::tempdir().unwrap();
    let pristine = tempfile::tempdir().unwrap();
    let ws0 = pristine.path().join("srcpkg");
    copy_tree(&fixture("srcpkg"), &ws0);
    let original = read(&ws0, GEO);

    // Durable selectors and ids from the pristine copy (this also stores its snapshot).
    struct Held {
        sels: Vec<(&'static str, String)>,
        symbol_id: String,
    }
    let mut held = Vec::new();
    for t in TARGETS {
        let (c, b) = locate_in(
            &ws0,
            home.path(),
            &format!("py://shapes.geometry#{}", t.py),
            &[],
        );
        assert_eq!(c, Some(0), "{}: {}", t.py, b["error"]);
        let dv = b["resolution"]["resolved"]["docVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let symbol_id = b["resolution"]["symbolId"].as_str().unwrap().to_string();
        let cursor = b["facts"]["target"]["selector"]
            .as_str()
            .unwrap()
            .to_string();
        let py = b["facts"]["selectors"]["symbol"]
            .as_str()
            .unwrap()
            .to_string();
        // The anchor of the header (the `sig` role's first line).
        let (sig_py, q) = match t.py.split_once('?') {
            Some((n, q)) => (format!("py://shapes.geometry#{n}:sig"), format!("?{q}")),
            None => (format!("py://shapes.geometry#{}:sig", t.py), String::new()),
        };
        let (_, sb) = locate_in(&ws0, home.path(), &format!("{sig_py}{q}"), &[]);
        let anchor = sb["facts"]["selectors"]["anchor"]
            .as_str()
            .unwrap()
            .to_string();
        let mut sels = vec![
            ("symbol", py),
            ("anchor", anchor),
            ("cursor", format!("{cursor}?docVersion={dv}")),
        ];
        if let Some(a) = t.ast {
            sels.push((
                "ast",
                format!("ast://[module=shapes.geometry]/{a}?docVersion={dv}"),
            ));
        }
        held.push(Held { sels, symbol_id });
    }

    // One thread per edit (each lanser run mostly waits on the interpreter probe).
    let results: Vec<Vec<(&str, &str, Option<String>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = EDITS
            .iter()
            .map(|(edit_name, edit, keeps_signatures)| {
                let (held, original, home) = (&held, &original, home.path());
                scope.spawn(move || {
                    let dir = tempfile::tempdir().unwrap();
                    let ws = dir.path().join("srcpkg");
                    copy_tree(&fixture("srcpkg"), &ws);
                    let edited = edit(original);
                    assert_ne!(&edited, original, "{edit_name} changed nothing");
                    std::fs::write(ws.join(GEO), &edited).unwrap();
                    let mut out = Vec::new();
                    for (t, h) in TARGETS.iter().zip(held) {
                        let want = line_after(&edited, t.after, t.needle);
                        for (form, sel) in &h.sels {
                            let (code, b) = locate_in(&ws, home, sel, &[]);
                            let r = &b["resolution"];
                            let outcome = match code {
                                Some(0) => {
                                    let got = b["facts"]["target"]["range"][0].as_u64().unwrap()
                                        as u32
                                        + 1;
                                    if got == want {
                                        if *form == "symbol" && *keeps_signatures {
                                            assert_eq!(
                                                r["symbolId"],
                                                h.symbol_id.as_str(),
                                                "{edit_name}: the symbolId of {} moved",
                                                t.py
                                            );
                                        }
                                        ("hit", None)
                                    } else if r["ambiguous"] == true {
                                        ("unsure", None)
                                    } else {
                                        let m =
                                            format!("{edit_name}: {sel} → line {got}, want {want}");
                                        ("wrong", Some(m))
                                    }
                                }
                                Some(4) => ("unsure", None),
                                // Honestly not found: no guess, but no hit either.
                                Some(3) => ("lost", None),
                                _ => (
                                    "wrong",
                                    Some(format!("{edit_name}: {sel} failed: {}", b["error"])),
                                ),
                            };
                            out.push((*form, outcome.0, outcome.1));
                        }
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut tally = Tally::default();
    let mut per_form: std::collections::BTreeMap<&str, Tally> = Default::default();
    let mut wrong = Vec::new();
    for (form, outcome, msg) in results.into_iter().flatten() {
        let f = per_form.entry(form).or_default();
        for t in [&mut tally, f] {
            t.total += 1;
            match outcome {
                "hit" => t.hit += 1,
                "unsure" => t.unsure += 1,
                "lost" => t.lost += 1,
                _ => {}
            }
        }
        wrong.extend(msg);
    }
    for (form, t) in &per_form {
        eprintln!(
            "relocation {form}: {}/{} found again, {} reported ambiguous, {} not found",
            t.hit, t.total, t.unsure, t.lost
        );
    }
    eprintln!(
        "relocation hit rate: {}/{} ({:.1}%), {} reported ambiguous, {} not found, {} wrong",
        tally.hit,
        tally.total,
        100.0 * tally.hit as f64 / tally.total as f64,
        tally.unsure,
        tally.lost,
        wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "confidently wrong or failed:\n{}",
        wrong.join("\n")
    );
    // Structural selectors must always be found again after these edits.
    for form in ["symbol", "ast"] {
        let t = &per_form[form];
        assert_eq!(t.hit, t.total, "{form}");
    }
}

#[test]
fn a_duplicated_module_is_ambiguous_unless_the_doc_version_tells() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("srcpkg");
    copy_tree(&fixture("srcpkg"), &ws);
    let (c, b) = locate_in(&ws, home.path(), "py://shapes.units#convert:sig", &[]);
    assert_eq!(c, Some(0));
    let anchor = b["facts"]["selectors"]["anchor"]
        .as_str()
        .unwrap()
        .to_string();
    let py = b["facts"]["selectors"]["symbol"]
        .as_str()
        .unwrap()
        .to_string();
    // Paste a copy of the whole module below itself: two identical contexts, two defs.
    let units = read(&ws, "src/shapes/units.py");
    std::fs::write(
        ws.join("src/shapes/units.py"),
        format!("{units}\n\n{units}"),
    )
    .unwrap();
    let line = line_with(&ws, "src/shapes/units.py", "def convert(");
    for sel in [&anchor, &py] {
        // Without the docVersion nothing tells the copies apart: E/AMBIGUOUS, both listed.
        let bare = sel
            .split("docVersion=")
            .next()
            .unwrap()
            .trim_end_matches(['?', '&']);
        let (c, b) = locate_in(&ws, home.path(), bare, &[]);
        assert_eq!(c, Some(4), "{bare}: {b}");
        assert_eq!(
            b["resolution"]["disambiguation"].as_array().unwrap().len(),
            2,
            "{bare}"
        );
        // With it, the diff says the first copy is the original, unchanged one.
        let (c, b) = locate_in(&ws, home.path(), sel, &[]);
        assert_eq!(c, Some(0), "{sel}: {b}");
        assert_eq!(
            b["facts"]["target"]["range"][0].as_u64().unwrap() as u32 + 1,
            line
        );
        assert_eq!(b["resolution"]["confidence"], 1.0);
    }
}

#[test]
fn a_stale_cursor_maps_through_the_snapshot_diff() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("srcpkg");
    copy_tree(&fixture("srcpkg"), &ws);
    let rel = "src/shapes/units.py";
    let text = read(&ws, rel);
    let line = line_with(&ws, rel, "def convert(");
    let (c, b) = locate_in(&ws, home.path(), &format!("{rel}@L{line}:convert"), &[]);
    assert_eq!(c, Some(0));
    let dv = b["resolution"]["resolved"]["docVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let sel = format!("{rel}@L{line}:C5?docVersion={dv}");
    // Lines inserted above: the unchanged line moves down, exactly (score 1.0).
    let edited = text.replacen(
        "PRECISION: int = 4\n",
        "import math\n\nPRECISION: int = 4\n",
        1,
    );
    std::fs::write(ws.join(rel), &edited).unwrap();
    let (c, b) = locate_in(&ws, home.path(), &sel, &[]);
    assert_eq!(c, Some(0), "{}", b["error"]);
    assert_eq!(
        b["facts"]["target"]["range"][0].as_u64().unwrap() as u32,
        line + 1
    );
    assert_eq!(b["resolution"]["confidence"], 1.0);
    assert_eq!(b["resolution"]["disambiguation"][0]["match"], "exact-map");
    // The line itself edited: found again by its old text, the cursor kept on `convert`.
    let edited2 = edited.replacen(
        "def convert(value: float, unit: str)",
        "def convert(value: float, unit: str = \"cm\")",
        1,
    );
    std::fs::write(ws.join(rel), &edited2).unwrap();
    let (c, b) = locate_in(&ws, home.path(), &sel, &[]);
    assert_eq!(c, Some(0), "{}", b["error"]);
    let t = &b["facts"]["target"];
    assert_eq!(t["range"][0].as_u64().unwrap() as u32, line + 1);
    assert_eq!(t["range"][1].as_u64().unwrap(), 4);
    // Gone entirely: E/VERSION_SKEW.
    let gone: String = edited2
        .lines()
        .filter(|l| !l.contains("convert"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(ws.join(rel), gone).unwrap();
    let (c, b) = locate_in(&ws, home.path(), &sel, &[]);
    assert_eq!(c, Some(10), "{b}");
}
