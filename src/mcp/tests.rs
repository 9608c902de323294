//! The tool table against the registry: every operation has a tool, and every argument of a
//! hand-written tool reaches the operation under a name the CLI knows.

use super::tools::{all, Build};
use crate::batch::LineParser;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// One call of each hand-written tool, together using every argument its schema lists.
fn samples() -> Vec<(&'static str, Value)> {
    let at = json!({"selector": "a.py@L1:x"});
    let pos = json!({"file": "a.py", "line": 1, "symbol": "x", "timeout": 5, "index_io": "utf-16",
        "pick": "best", "tau": 0.5, "offset": 1, "limit": 3});
    let mut v = vec![];
    for t in [
        "def",
        "type_def",
        "decl",
        "hover",
        "impl",
        "highlight",
        "signature",
    ] {
        v.push((t, at.clone()));
        v.push((t, pos.clone()));
    }
    v.extend([
        (
            "refs",
            json!({"selector": "a.py@L1:x", "exclude_declaration": true}),
        ),
        ("symbols", json!({"file": "a.py", "query": "x"})),
        ("diag", json!({"targets": ["a.py", "*.py"]})),
        (
            "calls",
            json!({"selector": "a.py@L1:x", "direction": "incoming"}),
        ),
        ("locate", json!({"selector": "a.py@L1:x", "preview": true})),
        (
            "complete",
            json!({"selector": "a.py@L1:x", "resolve": true}),
        ),
        (
            "types",
            json!({"selector": "a.py@L1:x", "direction": "subtypes"}),
        ),
        ("inlay", json!({"file": "a.py", "range": "1,1->2,1"})),
        (
            "format",
            json!({"file": "a.ts", "range": "1,1->2,1", "tab_size": 2, "tabs": true,
            "apply": true, "allow_dirty": true}),
        ),
        (
            "rename",
            json!({"selector": "a.py@L1:x", "new_name": "y", "apply": true,
            "allow_dirty": true}),
        ),
        (
            "rename_file",
            json!({"src": "a.py", "dst": "b.py", "apply": true,
            "allow_dirty": true}),
        ),
        (
            "apply",
            json!({"patch": "--- a/a.py\n+++ b/a.py\n", "require_clean": true,
            "apply": true, "allow_dirty": true}),
        ),
        (
            "edit",
            json!({"selector": "a.py@L1:x", "mode": "replace_body", "text": "pass",
            "force": true, "require_clean": true, "apply": true, "allow_dirty": true}),
        ),
        (
            "code_actions",
            json!({"selector": "a.py@L1:x", "kind": "quickfix", "apply": 0,
            "dry_run": true, "allow_dirty": true}),
        ),
        (
            "check",
            json!({"patch": "--- a/a.py\n+++ b/a.py\n", "reward": "pr-v2",
            "tests": true, "test_budget": 5}),
        ),
        ("impact", json!({"selector": "a.py@L1:x", "depth": 2})),
        ("impact", json!({"patch": "--- a/a.py\n+++ b/a.py\n"})),
        ("status", json!({})),
        ("capabilities", json!({})),
        ("reload", json!({})),
        (
            "request",
            json!({"method": "textDocument/hover", "target": "a.py@L1:x"}),
        ),
        (
            "request",
            json!({"method": "workspace/symbol", "payload": {"query": "x"}}),
        ),
    ]);
    v
}

#[test]
fn every_operation_has_a_tool() {
    let asked: BTreeSet<String> = all().iter().map(|s| s.cmd.clone()).collect();
    let ops: BTreeSet<String> = crate::commands::catalog::operations()
        .into_iter()
        .map(|o| o.name)
        .collect();
    assert_eq!(asked, ops);
    let names: Vec<String> = all().iter().map(|s| s.name.clone()).collect();
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "tool names repeat: {names:?}");
}

#[test]
fn hand_written_tools_speak_the_cli_arguments() {
    let root = std::env::temp_dir();
    let tools = all();
    let mut parser = LineParser::default();
    let mut used: BTreeSet<(String, String)> = BTreeSet::new();
    for (name, args) in samples() {
        let spec = tools
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        for k in args.as_object().unwrap().keys() {
            used.insert((name.to_string(), k.clone()));
        }
        let call = spec
            .call(args.clone(), &root)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let request = parser
            .parse(&call.line.to_string())
            .unwrap_or_else(|e| panic!("{name} {args}: its line {} is refused: {e}", call.line));
        assert_eq!(request.op.name(), spec.cmd, "{name}");
    }
    // The position and the common options are exercised by the position tools' samples.
    let props = |v: Value| -> Vec<String> {
        v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let mut shared = props(super::tools::schema_of::<super::tools::Position>());
    shared.extend(props(super::tools::schema_of::<super::tools::Common>()));
    for spec in tools
        .iter()
        .filter(|s| matches!(s.build, Build::Curated(_)))
    {
        let own = spec.schema["properties"].as_object().unwrap().keys();
        for key in own.filter(|k| !shared.contains(k)) {
            assert!(
                used.contains(&(spec.name.clone(), key.clone())),
                "no sample call of {} uses its argument {key:?}: add one to samples()",
                spec.name
            );
        }
    }
}

/// Every tool is named after its operation; a former name (and a former argument name) is
/// answered as the operation's own, and is not listed.
#[test]
fn tools_are_named_after_their_operations_and_former_names_still_answer() {
    let tools = all();
    for t in &tools {
        assert_eq!(t.name, t.cmd.replace('-', "_"));
    }
    let root = std::env::temp_dir();
    for (old, new) in super::tools::FORMER_NAMES {
        assert!(!tools.iter().any(|t| t.name == *old), "{old} is listed");
        assert_eq!(super::tools::canonical(old), *new);
        assert!(tools.iter().any(|t| t.name == *new), "{new}");
    }
    assert_eq!(super::tools::canonical("hover"), "hover");
    let call = |name: &str, args: Value| {
        let spec = tools.iter().find(|t| t.name == name).unwrap();
        spec.call(args, &root).unwrap().line
    };
    assert_eq!(
        call("rename_file", json!({"path": "a.py", "new_path": "b.py"})),
        call("rename_file", json!({"src": "a.py", "dst": "b.py"}))
    );
    assert_eq!(
        call("diag", json!({"files": ["a.py"]})),
        call("diag", json!({"targets": ["a.py"]}))
    );
}

#[test]
fn generated_tools_take_the_operations_arguments() {
    let tools = all();
    let prep = tools
        .iter()
        .find(|s| s.name == "prepare_rename")
        .expect("a generated tool");
    assert!(matches!(prep.build, Build::Generic(_)) && prep.read_only);
    let root = std::env::temp_dir();
    let call = prep
        .call(json!({"selector": "a.py@L1:x", "timeout": 9}), &root)
        .unwrap();
    assert_eq!(
        call.line,
        json!({"cmd": "prepare-rename", "selector": "a.py@L1:x"})
    );
    assert_eq!(call.globals.timeout, Some(9));
    assert_eq!(call.globals.over(&base_global()).unwrap().timeout, 9.0);
    let bad = prep.call(json!({"selector": "a.py@L1:x", "index_io": "utf-9"}), &root);
    let err = bad.unwrap().globals.over(&base_global()).unwrap_err();
    assert!(err.one_line().contains("index_io"), "{}", err.one_line());
    assert!(
        prep.call(json!({}), &root).is_err(),
        "a position is required"
    );
    let typo = prep
        .call(json!({"selector": "a.py@L1:x", "timeuot": 9}), &root)
        .unwrap_err();
    assert!(typo.contains("\"timeuot\""), "{typo}");
    let mut parser = LineParser::default();
    assert_eq!(
        parser.parse(&call.line.to_string()).unwrap().op.name(),
        "prepare-rename"
    );
}

/// The options `lanser --timeout 5 --workspace /w mcp --verbose` runs its calls under.
fn base_global() -> crate::cli::Global {
    use clap::Parser;
    let words = [
        "lanser",
        "--timeout",
        "5",
        "--workspace",
        "/w",
        "mcp",
        "--verbose",
    ];
    crate::cli::Cli::try_parse_from(words).unwrap().global
}

#[test]
fn calls_run_under_the_servers_global_options_with_their_own_set_over_them() {
    let base = base_global();
    let none = super::tools::Globals::default();
    assert!(none.is_empty());
    let same = none.over(&base).unwrap();
    assert_eq!(
        serde_json::to_value(&same).unwrap(),
        serde_json::to_value(&base).unwrap()
    );
    assert!(same.verbose && same.timeout == 5.0);
    let set = super::tools::Globals {
        timeout: Some(9),
        pick: Some("best".into()),
        tests: true,
        reward: Some("pr-v3".into()),
        ..Default::default()
    };
    let g = set.over(&base).unwrap();
    assert_eq!(
        (g.timeout, g.pick.as_deref(), g.tests.as_deref()),
        (9.0, Some("best"), Some("impacted"))
    );
    assert_eq!(
        (g.reward.as_str(), g.workspace.as_deref()),
        ("pr-v3", Some(std::path::Path::new("/w")))
    );
    let bad = super::tools::Globals {
        pick: Some("worst".into()),
        ..Default::default()
    };
    assert!(bad.over(&base).is_err());
}
