//! `lanser changes`: symbols added, removed, moved and changed since a git revision or since
//! the file versions a bundle recorded, from lanser's own outlines (no server). One committed
//! copy of srcpkg (its own LANSER_HOME, so the snapshot store is this test's), edited five
//! ways plus a TypeScript file; every answer is checked against what the edits did to the
//! fixture text, and the routes (CLI, batch line, daemon, daemon batch) give the same bytes.

use crate::daemon::Warm;
use crate::mutations::commit_tree;
use crate::support::*;
use serde_json::Value;
use std::path::Path;

const UNITS: &str = "src/shapes/units.py";
const GEOMETRY: &str = "src/shapes/geometry.py";
const ROUNDING: &str = "src/shapes/rounding.py";
const TS: &str = "tools/build.ts";

const ROUND_FN: &str = "def round_to_precision(value: float) -> float:
    \"\"\"Round ``value`` to the package-wide precision.\"\"\"
    return round(value, PRECISION)


";

const UNIT_METHOD: &str = "    @classmethod
    def unit(cls) -> \"Circle\":
        return cls(DEFAULT_RADIUS)

";

fn edit(ws: &Path, rel: &str, f: impl FnOnce(String) -> String) {
    let text = read(ws, rel);
    std::fs::write(ws.join(rel), f(text)).unwrap();
}

/// The five edits: `inches` added, `Circle.unit` deleted, `round_to_precision` moved to a new
/// module, `convert`'s signature and `Circle.area`'s body changed; and `build`'s signature in
/// TypeScript.
fn make_edits(ws: &Path) {
    edit(ws, UNITS, |t| {
        assert!(t.contains(ROUND_FN));
        let t = t.replace(ROUND_FN, "").replace(
            "def convert(value: float, unit: str) -> float:",
            "def convert(value: float, unit: str = \"cm\") -> float:",
        );
        t + "\n\ndef inches(value: float) -> float:\n    return convert(value, \"in\")\n"
    });
    std::fs::write(
        ws.join(ROUNDING),
        format!(
            "\"\"\"Rounding.\"\"\"\n\nfrom .units import PRECISION\n\n\n{}",
            ROUND_FN.trim_end()
        ) + "\n",
    )
    .unwrap();
    edit(ws, GEOMETRY, |t| {
        assert!(t.contains(UNIT_METHOD) && t.contains("3.14159 * self.radius"));
        t.replace(UNIT_METHOD, "")
            .replace("3.14159 * self.radius", "3.1415926 * self.radius")
    });
    edit(ws, TS, |t| {
        t.replace("build(a: number)", "build(a: number, b: number)")
    });
}

/// (kind, path, qualname, aspects, oldPath) of each change.
fn rows(b: &Value) -> Vec<(String, String, String, String, String)> {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    b["facts"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let aspects: Vec<String> = c["aspects"].as_array().unwrap().iter().map(s).collect();
            (
                s(&c["kind"]),
                s(&c["path"]),
                s(&c["qualname"]),
                aspects.join(","),
                s(&c["oldPath"]),
            )
        })
        .collect()
}

fn row(
    kind: &str,
    path: &str,
    qualname: &str,
    aspects: &str,
    old: &str,
) -> (String, String, String, String, String) {
    (
        kind.into(),
        path.into(),
        qualname.into(),
        aspects.into(),
        old.into(),
    )
}

/// The 0-based line of the first line of `text` holding `needle`.
fn line0(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64
}

fn change<'a>(b: &'a Value, qualname: &str) -> &'a Value {
    b["facts"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["qualname"] == qualname)
        .unwrap_or_else(|| panic!("no change of {qualname}"))
}

#[test]
fn changes_since_head_and_since_a_bundle_from_any_route() {
    let w = Warm::new("srcpkg");
    let ws = w.ws.clone();
    std::fs::create_dir_all(ws.join("tools")).unwrap();
    std::fs::write(
        ws.join(TS),
        "export function build(a: number): number {\n  return a;\n}\n",
    )
    .unwrap();
    commit_tree(&ws);
    let old_units = read(&ws, UNITS);
    let old_geometry = read(&ws, GEOMETRY);
    let here = |args: &[&str]| w.run(&[args, &["--no-daemon"]].concat());

    // Nothing changed yet: no changes, and a bundle that records units.py's version (whose
    // text lanser keeps).
    let clean = bundle(&here(&["changes", "--json"]));
    assert_eq!(clean["facts"]["changes"], serde_json::json!([]));
    let recorded = here(&["source", "py://shapes.units#convert", "--json"]);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before.json");
    std::fs::write(&before, &recorded.stdout).unwrap();

    make_edits(&ws);
    let new_units = read(&ws, UNITS);
    let new_geometry = read(&ws, GEOMETRY);
    let new_rounding = read(&ws, ROUNDING);

    // --since HEAD: every edit, as what it is.
    let o = here(&["changes", "--since", "HEAD", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    crate::schemas::collect(&o.stdout);
    assert_eq!(
        rows(&b),
        vec![
            row("changed", GEOMETRY, "Circle.area", "body", ""),
            row("removed", GEOMETRY, "Circle.unit", "", ""),
            row("moved", ROUNDING, "round_to_precision", "", UNITS),
            row("changed", UNITS, "convert", "signature", ""),
            row("added", UNITS, "inches", "", ""),
            row("changed", TS, "build", "signature", ""),
        ]
    );
    assert_eq!(b["facts"]["base"]["kind"], "git");
    assert_eq!(b["environment"]["server"], Value::Null, "no server");
    assert_eq!(b["facts"]["provenance"], "parser");
    let files: Vec<(&str, &str)> = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    // By path.
    assert_eq!(
        files,
        [
            (GEOMETRY, "modified"),
            (ROUNDING, "added"),
            (UNITS, "modified"),
            (TS, "modified")
        ]
    );
    // Where each is, from the texts: now, and before.
    let start = |c: &Value, k: &str| c[k][0].as_u64();
    let inches = change(&b, "inches");
    assert_eq!(
        start(inches, "range"),
        Some(line0(&new_units, "def inches("))
    );
    assert_eq!(start(inches, "oldRange"), None);
    let unit = change(&b, "Circle.unit");
    assert_eq!(
        start(unit, "oldRange"),
        Some(line0(&old_geometry, "@classmethod"))
    );
    assert_eq!(start(unit, "range"), None);
    let moved = change(&b, "round_to_precision");
    assert_eq!(
        start(moved, "oldRange"),
        Some(line0(&old_units, "def round_to_precision("))
    );
    assert_eq!(
        start(moved, "range"),
        Some(line0(&new_rounding, "def round_to_precision("))
    );
    assert_eq!(moved["oldQualname"], "round_to_precision");
    // Moved unchanged to a sibling module: ast 1, module 0.5, token 1, prox 0.5 (no line to
    // compare across files), by the relocation weights.
    let want = lanser::relocate::score::round4(0.5 + 0.2 * 0.5 + 0.2 + 0.1 * 0.5);
    assert_eq!(moved["confidence"].as_f64(), Some(want));
    let area = change(&b, "Circle.area");
    assert_eq!(
        start(area, "range"),
        Some(line0(&new_geometry, "3.1415926 * self.radius") - 1)
    );
    // Its durable selector lands on it.
    let sel = area["selector"].as_str().unwrap();
    assert!(sel.starts_with("py://shapes.geometry#Circle.area"), "{sel}");
    let src = bundle(&here(&["source", sel, "--json"]));
    assert!(src["facts"]["text"].as_str().unwrap().contains("3.1415926"));

    // The human rendering: one line per change.
    let human = stdout(&here(&["changes"]));
    assert_eq!(human.lines().count(), 1 + 6, "{human}");
    assert!(
        human.contains("moved function round_to_precision"),
        "{human}"
    );

    // The same bytes from a batch line, the daemon and the daemon's batch.
    let cli = stdout(&o);
    let line = r#"{"cmd":"changes","args":{"since":"HEAD"}}"#;
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, format!("{line}\n")).unwrap();
    let input = input.to_str().unwrap();
    let batch = here(&["batch", "--in", input, "--out", "-"]);
    assert_eq!(stdout(&batch), cli, "batch line");
    let daemon = w.run(&["changes", "--since", "HEAD", "--json"]);
    assert_eq!(stdout(&daemon), cli, "daemon");
    let daemon_batch = w.run(&["batch", "--in", input, "--out", "-"]);
    assert_eq!(stdout(&daemon_batch), cli, "daemon batch");

    // --since-bundle: units.py against the version the bundle recorded (the text lanser kept
    // when it wrote that bundle); the move's target is a file the bundle does not name, so
    // from there the function was removed.
    let before = before.to_str().unwrap();
    let o = here(&["changes", "--since-bundle", before, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sb = bundle(&o);
    assert_eq!(
        rows(&sb),
        vec![
            row("changed", UNITS, "convert", "signature", ""),
            row("added", UNITS, "inches", "", ""),
            row("removed", UNITS, "round_to_precision", "", ""),
        ]
    );
    assert_eq!(
        sb["facts"]["base"]["bundleId"],
        bundle(&recorded)["bundleId"]
    );
    assert_eq!(sb["meta"]["complete"], true);
    let daemon = w.run(&["changes", "--since-bundle", before, "--json"]);
    assert_eq!(stdout(&daemon), stdout(&o), "daemon");

    // A version lanser never kept: said so, as E/VERSION_SKEW.
    let mut forged: Value = serde_json::from_slice(&recorded.stdout).unwrap();
    let missing = format!("sha256:{}", "1".repeat(64));
    forged["meta"]["docVersions"][UNITS] = Value::String(missing.clone());
    let forged_path = dir.path().join("forged.json");
    std::fs::write(&forged_path, forged.to_string()).unwrap();
    let o = here(&["changes", "--since-bundle", forged_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(10), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("E/VERSION_SKEW") && stderr(&o).contains(&missing),
        "{}",
        stderr(&o)
    );
    // A revision git does not know: a usage error.
    let o = here(&["changes", "--since", "no-such-rev"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
