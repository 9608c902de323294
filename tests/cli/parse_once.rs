//! A request is parsed once, where it enters lanser, whatever its route: a CLI call or an MCP
//! tool call is parsed in its own process and reaches the daemon as the parsed request (a
//! value), and a batch stream's lines are parsed by the daemon alone. `LANSER_PARSE_LOG`
//! logs every parse by lanser's command-line definitions with the pid that made it.

use crate::daemon::Warm;
use crate::support::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

const SEL: &str = "tests/test_geometry.py@L10:Circle";
const CONVERT: &str = "src/shapes/units.py@L13:convert";

/// What each process parsed so far, by pid.
fn parses(log: &Path) -> BTreeMap<u64, Vec<String>> {
    let mut by_pid: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let (pid, what) = line.split_once(' ').expect("`<pid> <what>`");
        by_pid
            .entry(pid.parse().unwrap())
            .or_default()
            .push(what.to_string());
    }
    by_pid
}

/// The parses made since `before`, by pid.
fn since(log: &Path, before: &BTreeMap<u64, Vec<String>>) -> BTreeMap<u64, Vec<String>> {
    parses(log)
        .into_iter()
        .filter_map(|(pid, all)| {
            let old = before.get(&pid).map_or(0, Vec::len);
            (all.len() > old).then(|| (pid, all[old..].to_vec()))
        })
        .collect()
}

/// The parses made since `before`, none of them by the daemon (`daemon`), by pid.
fn none_by_daemon(
    log: &Path,
    before: &BTreeMap<u64, Vec<String>>,
    daemon: u64,
) -> BTreeMap<u64, Vec<String>> {
    let new = since(log, before);
    assert!(
        !new.contains_key(&daemon),
        "the daemon parsed {:?}",
        new[&daemon]
    );
    new
}

/// One process's command line, then one parse per request line (`n` lines).
fn one_per_line(n: usize) -> Vec<String> {
    let mut want = vec!["command-line".to_string()];
    want.extend((0..n).map(|_| "line".to_string()));
    want
}

/// How many requests the daemon has answered.
fn requests(w: &Warm) -> u64 {
    w.status()["requests"].as_u64().unwrap()
}

#[test]
fn a_request_is_parsed_once_whether_it_comes_from_the_cli_mcp_or_a_batch() {
    let w = Warm::new("srcpkg");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("parses.log");
    let run = |args: &[&str]| {
        let o = w.cmd(args).env("LANSER_PARSE_LOG", &log).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    };
    // The daemon is started by the first call and parses its own command line, once.
    run(&["def", SEL, "--json"]);
    let daemon = w.status()["pid"].as_u64().unwrap();
    assert_eq!(parses(&log)[&daemon], ["command-line"]);

    // The CLI: one parse, in the CLI's process; none in the daemon.
    let before = parses(&log);
    let asks: &[&[&str]] = &[
        &["hover", SEL, "--json"],
        &["refs", CONVERT, "--exclude-declaration", "--json"],
        &["rename", CONVERT, "convert_units", "--json"],
        &["symbols", "--query", "Circle", "--timeout", "30", "--json"],
    ];
    let answered = requests(&w);
    for args in asks {
        assert_eq!(bundle(&run(args))["status"], "ok", "{args:?}");
    }
    assert_eq!(
        requests(&w) - answered,
        asks.len() as u64,
        "the daemon answered each"
    );
    let new = none_by_daemon(&log, &before, daemon);
    assert_eq!(new.len(), asks.len(), "one process per call: {new:?}");
    assert!(new.values().all(|p| p == &["command-line"]), "{new:?}");

    // MCP: each tool call's line is parsed once, in the MCP server; none in the daemon.
    let before = parses(&log);
    let calls = [
        ("def", json!({"selector": SEL})),
        ("hover", json!({"selector": SEL, "timeout": 30})),
        (
            "refs",
            json!({"selector": CONVERT, "exclude_declaration": true}),
        ),
        (
            "rename",
            json!({"selector": CONVERT, "new_name": "to_units"}),
        ),
        // A write goes to the daemon too: no second server in the MCP process.
        (
            "rename",
            json!({"selector": CONVERT, "new_name": "to_units", "apply": true, "allow_dirty": true}),
        ),
    ];
    let mut mcp = w.cmd(&["mcp"]);
    mcp.env("LANSER_PARSE_LOG", &log);
    let answered = requests(&w);
    let results = mcp_session(mcp, &calls);
    for ((name, _), r) in calls.iter().zip(&results) {
        assert_eq!(r["structuredContent"]["status"], "ok", "{name}: {r}");
    }
    assert_eq!(
        requests(&w) - answered,
        calls.len() as u64,
        "the daemon answered each"
    );
    assert!(read(&w.ws, "src/shapes/units.py").contains("def to_units("));
    let new = none_by_daemon(&log, &before, daemon);
    assert_eq!(new.len(), 1, "only the MCP server parses: {new:?}");
    assert_eq!(new.into_values().next().unwrap(), one_per_line(calls.len()));

    // A batch through the daemon: its command line and each line in the batch's process,
    // once; the daemon is sent the parsed lines.
    let before = parses(&log);
    let input = dir.path().join("in.jsonl");
    let lines = [
        json!({"cmd": "def", "selector": SEL}),
        json!({"cmd": "hover", "selector": SEL}),
        // `convert` is `to_units` since the MCP write above.
        json!({"cmd": "refs", "selector": "src/shapes/units.py@L13:to_units"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let input = input.to_str().unwrap();
    let answered = requests(&w);
    let out = run(&["batch", "--in", input, "--out", "-"]);
    let bundles: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(bundles.len(), lines.len());
    assert!(bundles.iter().all(|b| b["status"] == "ok"));
    assert_eq!(
        requests(&w) - answered,
        lines.len() as u64,
        "the daemon answered each"
    );
    let new = none_by_daemon(&log, &before, daemon);
    assert_eq!(new.len(), 1, "only the batch's process parses: {new:?}");
    assert_eq!(new.into_values().next().unwrap(), one_per_line(lines.len()));
}
