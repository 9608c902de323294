//! `lanser selection-range`: the ranges enclosing a position, from a server that declares
//! selectionRangeProvider (typescript-language-server), and a refusal from one that does not
//! (Pyright), through the CLI and a batch alike.

use crate::support::*;

fn contains(outer: &[u32; 4], inner: &[u32; 4]) -> bool {
    (outer[0], outer[1]) <= (inner[0], inner[1]) && (inner[2], inner[3]) <= (outer[2], outer[3])
}

#[test]
fn ranges_enclose_the_position_innermost_first_and_pyright_refuses() {
    let ts = fixture("ts");
    let ws = ts.to_string_lossy().into_owned();
    let app = "src/app.ts";
    let at = line_with(&ts, app, "store.add(item)");
    let sel = format!("{app}@L{at}:add");
    let o = run(&["selection-range", &sel, "--workspace", &ws, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let ranges = locs(&b["facts"]["ranges"]);
    assert!(ranges.len() >= 4, "{ranges:?}");
    assert!(ranges.iter().all(|(p, _)| p == app));
    // Innermost: the identifier itself; each next one holds the one before it.
    assert_eq!(ranges[0].1, ident_range(&ts, app, at, "add"));
    for pair in ranges.windows(2) {
        assert!(contains(&pair[1].1, &pair[0].1), "{pair:?}");
        assert_ne!(pair[1].1, pair[0].1);
    }
    // The enclosing function, from its `export` to its closing brace, is one of them.
    let text = read(&ts, app);
    let start = line_with(&ts, app, "export function checkout") - 1;
    let end = text
        .split('\n')
        .enumerate()
        .skip(start as usize)
        .find(|(_, l)| *l == "}")
        .map(|(i, _)| i as u32)
        .unwrap();
    assert!(
        ranges.iter().any(|(_, r)| *r == [start, 0, end, 1]),
        "function checkout at {start}..{end}: {ranges:?}"
    );
    // Outermost: the whole file, from its first character.
    let last = ranges.last().unwrap().1;
    assert_eq!((last[0], last[1]), (0, 0));

    // A batch line asks the same and answers the same bytes.
    let line = serde_json::json!({"cmd": "selection-range", "selector": sel}).to_string();
    let bo = batch_lines(&ts, &[&line]);
    assert_eq!(stdout(&bo), stdout(&o));

    // Pyright declares no selectionRangeProvider: refused before anything is sent.
    let demo = fixture("demo");
    let o = run(&[
        "selection-range",
        "cli.py@L17:add_item",
        "--workspace",
        &demo.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(72), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("E/UNSUPPORTED_CAP"), "{err}");
    assert!(err.contains("selectionRangeProvider"), "{err}");
}
