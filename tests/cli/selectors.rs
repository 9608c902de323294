//! Every selector form and every role on the fixtures, checked against the fixture text (the
//! expected spans are literal strings and lines found with the standard library), plus the
//! structural forms through real Pyright.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

fn srcpkg() -> std::path::PathBuf {
    fixture("srcpkg")
}

/// `lanser locate SEL --json` in `ws` with its own LANSER_HOME (snapshots). locate needs no
/// server and no interpreter: an empty PATH skips the interpreter probe, which dominates the
/// run time of hundreds of runs.
pub fn locate_in(ws: &Path, home: &Path, sel: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let o = lanser()
        .args(["locate", sel, "--json", "--workspace"])
        .arg(ws)
        .args(extra)
        .env("LANSER_HOME", home)
        .env("PATH", "")
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap();
    (o.status.code(), bundle(&o))
}

/// 1-based line of the first line containing `needle` after the first line containing
/// `after` (from the top when `after` is empty).
pub fn line_after(text: &str, after: &str, needle: &str) -> u32 {
    let lines: Vec<&str> = text.split('\n').collect();
    let from = if after.is_empty() {
        0
    } else {
        lines
            .iter()
            .position(|l| l.contains(after))
            .unwrap_or_else(|| panic!("{after:?} not found"))
    };
    let i = lines[from..]
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not after {after:?}"));
    (from + i + 1) as u32
}

const GEO: &str = "src/shapes/geometry.py";

#[test]
fn every_form_and_role_lands_on_the_fixture_text() {
    let ws = srcpkg();
    let home = tempfile::tempdir().unwrap();
    let geo = read(&ws, GEO);
    // (selector, file, text of the span, line of its start: (after, needle))
    let cases: &[(&str, &str, &str, (&str, &str))] = &[
        (
            "py://shapes.geometry#Circle.area",
            GEO,
            "area",
            ("class Circle", "def area("),
        ),
        (
            "py://shapes.geometry#Circle.area:def",
            GEO,
            "area",
            ("class Circle", "def area("),
        ),
        (
            "py://shapes.geometry#Circle.area:sig",
            GEO,
            "def area(self) -> float:",
            ("class Circle", "def area("),
        ),
        (
            "py://shapes.geometry#Circle.area:body",
            GEO,
            "return round_to_precision(3.14159 * self.radius**2)",
            ("class Circle", "return round_to"),
        ),
        (
            "py://shapes.geometry#Shape.area:doc",
            GEO,
            "\"\"\"Return the area of the shape in square centimetres.\"\"\"",
            ("class Shape", "Return the area"),
        ),
        (
            "py://shapes.geometry#Shape:doc",
            GEO,
            "\"\"\"Base class for every shape.\"\"\"",
            ("", "Base class"),
        ),
        (
            "py://shapes.geometry#Square.Corner",
            GEO,
            "Corner",
            ("", "class Corner"),
        ),
        (
            "py://shapes.geometry#Square.Corner.__init__:sig",
            GEO,
            "def __init__(self, x: float, y: float) -> None:",
            ("class Corner", "def __init__"),
        ),
        (
            "py://shapes.geometry#Square.Corner:sig",
            GEO,
            "class Corner:",
            ("", "class Corner"),
        ),
        // Properties: the getter; sig from `def`, decorators excluded.
        (
            "py://shapes.geometry#Shape.name:sig",
            GEO,
            "def name(self) -> str:",
            ("class Shape", "def name("),
        ),
        (
            "py://shapes.geometry#Circle.diameter:body",
            GEO,
            "return self.radius * 2",
            ("class Circle", "self.radius * 2"),
        ),
        (
            "py://shapes.geometry#Circle.unit:sig",
            GEO,
            "def unit(cls) -> \"Circle\":",
            ("", "def unit("),
        ),
        // Overloads by 0-based index; no index is the implementation.
        (
            "py://shapes.geometry#scale:sig?overload=0",
            GEO,
            "def scale(value: int, factor: int) -> int:",
            ("", "def scale(value: int,"),
        ),
        (
            "py://shapes.geometry#scale:sig?overload=1",
            GEO,
            "def scale(value: float, factor: float) -> float:",
            ("", "def scale(value: float"),
        ),
        (
            "py://shapes.geometry#scale:sig",
            GEO,
            "def scale(value: int | float, factor: int | float) -> int | float:",
            ("", "def scale(value: int |"),
        ),
        (
            "py://shapes.geometry#scale:doc",
            GEO,
            "\"\"\"Multiply ``value`` by ``factor``, keeping ints as ints.\"\"\"",
            ("", "Multiply"),
        ),
        // Async defs: the header includes `async`.
        (
            "py://shapes.geometry#fetch_shape:sig",
            GEO,
            "async def fetch_shape(kind: str, size: float = DEFAULT_RADIUS) -> Shape:",
            ("", "async def"),
        ),
        (
            "py://shapes.geometry#fetch_shape",
            GEO,
            "fetch_shape",
            ("", "async def"),
        ),
        // Module-level assignments.
        (
            "py://shapes.geometry#DEFAULT_RADIUS:sig",
            GEO,
            "DEFAULT_RADIUS: float",
            ("", "DEFAULT_RADIUS:"),
        ),
        (
            "py://shapes.geometry#DEFAULT_RADIUS:body",
            GEO,
            "1.0",
            ("", "DEFAULT_RADIUS:"),
        ),
        (
            "py://shapes.units#_CM_PER_UNIT",
            "src/shapes/units.py",
            "_CM_PER_UNIT",
            ("", "_CM_PER_UNIT:"),
        ),
        (
            "py://shapes.units#convert:doc",
            "src/shapes/units.py",
            "\"\"\"Convert a length given in centimetres into ``unit``.\"\"\"",
            ("", "Convert a length"),
        ),
        // Class-level assignment in a CRLF file.
        (
            "py://shapes.crlf_mod#CrlfThing.bump:body",
            "src/shapes/crlf_mod.py",
            "return crlf_helper(self.start)",
            ("def bump", "return crlf_helper"),
        ),
        // Unicode identifiers and docstrings.
        (
            "py://shapes.intl#面积",
            "src/shapes/intl.py",
            "面积",
            ("", "面积 = 3.0"),
        ),
        (
            "py://shapes.intl#合计:body",
            "src/shapes/intl.py",
            "面积 + total",
            ("", "合计 ="),
        ),
        (
            "py://shapes.intl#describe:doc",
            "src/shapes/intl.py",
            "\"\"\"返回一个带表情符号的描述 🐍\"\"\"",
            ("", "返回一个"),
        ),
        // A package re-export: `shapes` is __init__.py, Circle lives in its sibling module.
        ("py://shapes#Circle", GEO, "Circle", ("", "class Circle")),
        // AST paths.
        (
            "ast://[module=shapes.geometry]/[class=Circle]/[def=area]/name[1]",
            GEO,
            "area",
            ("class Circle", "def area("),
        ),
        (
            "ast://[module=shapes.geometry]/[class=Square]/[class=Corner]/[def=__init__]",
            GEO,
            "__init__",
            ("class Corner", "def __init__"),
        ),
        (
            "ast://[module=shapes.geometry]/[def=fetch_shape]/call[1]",
            GEO,
            "asyncio.sleep(0)",
            ("", "asyncio.sleep"),
        ),
        (
            "ast://[module=shapes.geometry]/[def=fetch_shape]/call[2]",
            GEO,
            "Circle(size)",
            ("", "Circle(size)"),
        ),
        (
            "ast://[module=shapes.geometry]/[def=fetch_shape]/parameters[1]",
            GEO,
            "(kind: str, size: float = DEFAULT_RADIUS)",
            ("", "async def"),
        ),
        (
            "ast://[module=shapes.geometry]/[assign=DEFAULT_RADIUS]",
            GEO,
            "DEFAULT_RADIUS",
            ("", "DEFAULT_RADIUS:"),
        ),
        (
            "ast://[module=shapes.units]/string[1]",
            "src/shapes/units.py",
            "\"\"\"Unit conversion helpers shared across the package.\"\"\"",
            ("", "Unit conversion"),
        ),
        (
            "ast://[module=shapes.intl]/[def=describe]/identifier[2]",
            "src/shapes/intl.py",
            "名字",
            ("", "def describe"),
        ),
        // Anchors.
        (
            "anchor://src/shapes/units.py#\"def convert(\"",
            "src/shapes/units.py",
            "def convert(",
            ("", "def convert("),
        ),
        (
            "anchor://src/shapes/intl.py#\"合计%20=%20面积\"?ctx=4",
            "src/shapes/intl.py",
            "合计 = 面积",
            ("", "合计 = 面积"),
        ),
        // Reformatted (whitespace differs): found, flagged as fuzzy.
        (
            "anchor://src/shapes/geometry.py#\"def area_of(shape:Shape)->float:\"",
            GEO,
            "def area_of(shape: Shape) -> float:",
            ("", "def area_of("),
        ),
    ];
    for (sel, file, text, (after, needle)) in cases {
        let (code, b) = locate_in(&ws, home.path(), sel, &[]);
        assert_eq!(code, Some(0), "{sel}: {}", b["error"]);
        let t = &b["facts"]["target"];
        assert_eq!(t["path"], *file, "{sel}");
        assert_eq!(t["text"], *text, "{sel}");
        let src = if *file == GEO {
            geo.clone()
        } else {
            read(&ws, file)
        };
        let want = line_after(&src, after, needle);
        assert_eq!(
            t["range"][0].as_u64().unwrap() + 1,
            u64::from(want),
            "{sel}"
        );
        let r = &b["resolution"];
        assert_eq!(r["resolved"]["path"], *file, "{sel}");
        assert_eq!(r["weights"]["ast"], 0.5, "{sel}");
        assert!(r["confidence"].as_f64().unwrap() >= 0.75, "{sel}: {r}");
        if sel.starts_with("py://") || sel.starts_with("ast://") {
            let id = r["symbolId"].as_str().unwrap_or_default();
            assert!(id.starts_with("sym:") || sel.contains("]/"), "{sel}: {r}");
        }
    }
}

#[test]
fn evidence_is_recorded_per_candidate() {
    let ws = srcpkg();
    let home = tempfile::tempdir().unwrap();
    // Through the package: same package, another file → module feature 0.5.
    let (_, b) = locate_in(&ws, home.path(), "py://shapes#Circle", &[]);
    let r = &b["resolution"];
    assert_eq!(r["features"]["module"], 0.5, "{r}");
    assert_eq!(r["features"]["ast"], 1.0);
    assert_eq!(r["disambiguation"][0]["score"], r["confidence"]);
    // The fuzzy (reformatted) anchor says so.
    let (_, b) = locate_in(
        &ws,
        home.path(),
        "anchor://src/shapes/geometry.py#\"def area_of(shape:Shape)->float:\"",
        &[],
    );
    assert_eq!(b["resolution"]["disambiguation"][0]["match"], "fuzzy");
    // The symbol facts of locate.
    let (_, b) = locate_in(
        &ws,
        home.path(),
        "py://shapes.geometry#scale?overload=1",
        &[],
    );
    let s = &b["facts"]["symbol"];
    assert_eq!(s["qualname"], "scale");
    assert_eq!(s["kind"], "function");
    assert_eq!(s["shape"], "def(value,factor)");
    assert_eq!(s["symbolId"], b["resolution"]["symbolId"]);
    let (_, b0) = locate_in(
        &ws,
        home.path(),
        "py://shapes.geometry#scale?overload=0",
        &[],
    );
    assert_ne!(b0["facts"]["symbol"]["symbolId"], s["symbolId"]);
}

#[test]
fn failures_have_their_exit_codes_and_name_every_candidate() {
    let ws = srcpkg();
    let home = tempfile::tempdir().unwrap();
    let cases: &[(&str, i32, &str)] = &[
        (
            "py://shapes.geometry#Circle.area:doc",
            3,
            "has no docstring",
        ),
        (
            "py://shapes.geometry#scale?overload=2",
            3,
            "2 @overload definitions",
        ),
        (
            "py://shapes.geometry#area",
            3,
            "did you mean Shape.area, Circle.area, Square.area?",
        ),
        (
            "py://shapes.nowhere#f",
            3,
            "no module shapes.nowhere under the import roots [., src]",
        ),
        (
            "ast://[module=shapes.geometry]/[class=Circle]/[class=area]",
            3,
            "does not define Circle.area",
        ),
        (
            "ast://[module=shapes.geometry]/[def=area_of]/call[9]",
            3,
            "has 1 'call' node(s), not 9",
        ),
        (
            "anchor://src/shapes/units.py#\"no such text here\"",
            3,
            "matches nothing",
        ),
        (
            "py://shapes.geometry#Circle.area:bogus",
            2,
            "byte 33: expected a role",
        ),
        (
            "anchor://src/shapes/units.py#\"x",
            2,
            "byte 31: expected '\"' closing the snippet",
        ),
    ];
    for (sel, code, msg) in cases {
        let (c, b) = locate_in(&ws, home.path(), sel, &[]);
        assert_eq!(c, Some(*code), "{sel}: {}", b["error"]);
        let m = b["error"]["message"].as_str().unwrap();
        assert!(m.contains(msg), "{sel}: {m}");
    }
    // Two exact occurrences: E/AMBIGUOUS, each listed, in the message and the bundle.
    let sel = "anchor://src/shapes/geometry.py#\"return round_to_precision(\"";
    let geo = read(&ws, GEO);
    let l1 = line_after(&geo, "class Circle", "return round_to");
    let l2 = line_after(&geo, "class Square", "return round_to");
    let (c, b) = locate_in(&ws, home.path(), sel, &[]);
    assert_eq!(c, Some(4));
    assert_eq!(b["error"]["code"], "E/AMBIGUOUS");
    let m = b["error"]["message"].as_str().unwrap();
    assert!(
        m.contains(&format!("geometry.py:{l1}:9")) && m.contains(&format!("geometry.py:{l2}:9")),
        "{m}"
    );
    let d = b["resolution"]["disambiguation"].as_array().unwrap();
    let lines: Vec<u64> = d
        .iter()
        .map(|c| c["range"][0].as_u64().unwrap() + 1)
        .collect();
    assert_eq!(lines, [u64::from(l1), u64::from(l2)]);
    assert_eq!(b["resolution"]["ambiguous"], true);
    // --pick best takes the first in (score, path, range) order.
    let (c, b) = locate_in(&ws, home.path(), sel, &["--pick", "best"]);
    assert_eq!(c, Some(0));
    assert_eq!(
        b["facts"]["target"]["range"][0].as_u64().unwrap() + 1,
        u64::from(l1)
    );
    // The anchor's hash (sha1 of 24 characters each side) pins the second one.
    let start = geo
        .match_indices("return round_to_precision(")
        .nth(1)
        .unwrap()
        .0;
    let end = start + "return round_to_precision(".len();
    let a: usize = geo[..start]
        .chars()
        .rev()
        .take(24)
        .map(char::len_utf8)
        .sum();
    let z: usize = geo[end..].chars().take(24).map(char::len_utf8).sum();
    let hash = sha1_hex(&geo.as_bytes()[start - a..end + z]);
    let (c, b) = locate_in(
        &ws,
        home.path(),
        &format!("{sel}?ctx=24&hash=sha1:{hash}"),
        &[],
    );
    assert_eq!(c, Some(0), "{}", b["error"]);
    assert_eq!(
        b["facts"]["target"]["range"][0].as_u64().unwrap() + 1,
        u64::from(l2)
    );
    assert_eq!(b["resolution"]["confidence"], 1.0);
}

fn sha1_hex(bytes: &[u8]) -> String {
    use sha1::Digest;
    sha1::Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn redefinitions_are_ambiguous_and_stale_cursors_without_snapshot_skew() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    std::fs::write(ws.join("pyrightconfig.json"), "{}").unwrap();
    let src = "import sys\n\nif sys.platform == \"win32\":\n    def helper(x):\n        return 1\nelse:\n    def helper(x):\n        return 2\n";
    std::fs::write(ws.join("mod.py"), src).unwrap();
    let (c, b) = locate_in(ws, home.path(), "py://mod#helper", &[]);
    assert_eq!(c, Some(4), "{b}");
    let m = b["error"]["message"].as_str().unwrap();
    assert!(m.contains("mod.py:4:9") && m.contains("mod.py:7:9"), "{m}");
    let (c, b) = locate_in(ws, home.path(), "py://mod#helper:body", &["--pick", "best"]);
    assert_eq!(c, Some(0));
    assert_eq!(b["facts"]["target"]["text"], "return 1");
    // A cursor pinned to a version whose snapshot lanser never saw.
    let dv = format!("sha256:{}", "0".repeat(64));
    let (c, b) = locate_in(
        ws,
        home.path(),
        &format!("mod.py@L4:C9?docVersion={dv}"),
        &[],
    );
    assert_eq!(c, Some(10));
    assert!(b["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not in the snapshot store"));
}

#[test]
fn structural_selectors_drive_real_pyright() {
    let ws = srcpkg();
    let ws_s = ws.to_string_lossy().into_owned();
    let geo = read(&ws, GEO);
    let line = line_after(&geo, "class Circle", "def area(");
    let o = run(&[
        "def",
        "py://shapes.geometry#Circle.area",
        "--json",
        "--workspace",
        &ws_s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(GEO.to_string(), ident_range(&ws, GEO, line, "area"))]
    );
    assert!(b["resolution"]["symbolId"]
        .as_str()
        .unwrap()
        .starts_with("sym:"));
    // refs through an anchor (it starts on the name), hover through an ast path.
    let sel = "anchor://src/shapes/units.py#\"convert(value:%20float\"";
    let o = run(&["refs", sel, "--json", "--workspace", &ws_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let refs = locs(&bundle(&o)["facts"]["references"]);
    assert!(
        refs.iter().any(|(p, _)| p == "src/shapes/broken.py"),
        "{refs:?}"
    );
    assert!(
        refs.iter().any(|(p, _)| p == "src/shapes/intl.py"),
        "{refs:?}"
    );
    let o = run(&[
        "hover",
        "ast://[module=shapes.geometry]/[def=scale]",
        "--json",
        "--workspace",
        &ws_s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let h = bundle(&o)["facts"]["hover"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(h.contains("scale"), "{h}");
}
