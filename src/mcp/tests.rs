//! The tool table against the registry: every operation has one tool, made from the catalog
//! and its overlay, and a call asks what the hand-written tools it replaced asked.

use super::tools::all;
use crate::batch::LineParser;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Calls of the tools as they were hand-written (one per tool and argument, with the former
/// argument names), each with the request line its hand-written builder made (`@PATCHES@`:
/// the directory of content-named diff files). The generated tools must ask the same: the
/// same request, so the same bundle, byte for byte.
const FORMER_LINES: &[(&str, &str, &str)] = &[
    (
        "def",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"def","selector":"a.py@L1:x"}"#,
    ),
    (
        "def",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"def","selector":"a.py@L1:x"}"#,
    ),
    (
        "type_def",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"type-def","selector":"a.py@L1:x"}"#,
    ),
    (
        "type_def",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"type-def","selector":"a.py@L1:x"}"#,
    ),
    (
        "decl",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"decl","selector":"a.py@L1:x"}"#,
    ),
    (
        "decl",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"decl","selector":"a.py@L1:x"}"#,
    ),
    (
        "hover",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"hover","selector":"a.py@L1:x"}"#,
    ),
    (
        "hover",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"hover","selector":"a.py@L1:x"}"#,
    ),
    (
        "impl",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"impl","selector":"a.py@L1:x"}"#,
    ),
    (
        "impl",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"impl","selector":"a.py@L1:x"}"#,
    ),
    (
        "highlight",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"highlight","selector":"a.py@L1:x"}"#,
    ),
    (
        "highlight",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"highlight","selector":"a.py@L1:x"}"#,
    ),
    (
        "signature",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"signature","selector":"a.py@L1:x"}"#,
    ),
    (
        "signature",
        r#"{"file":"a.py","index_io":"utf-16","limit":3,"line":1,"offset":1,"pick":"best","symbol":"x","tau":0.5,"timeout":5}"#,
        r#"{"cmd":"signature","selector":"a.py@L1:x"}"#,
    ),
    (
        "refs",
        r#"{"exclude_declaration":true,"selector":"a.py@L1:x"}"#,
        r#"{"args":{"exclude-declaration":true},"cmd":"refs","selector":"a.py@L1:x"}"#,
    ),
    (
        "symbols",
        r#"{"file":"a.py","query":"x"}"#,
        r#"{"args":{"file":"a.py","query":"x"},"cmd":"symbols"}"#,
    ),
    (
        "diag",
        r#"{"targets":["a.py","*.py"]}"#,
        r#"{"args":{"targets":["a.py","*.py"]},"cmd":"diag"}"#,
    ),
    (
        "calls",
        r#"{"direction":"incoming","selector":"a.py@L1:x"}"#,
        r#"{"args":{"incoming":true},"cmd":"calls","selector":"a.py@L1:x"}"#,
    ),
    (
        "locate",
        r#"{"preview":true,"selector":"a.py@L1:x"}"#,
        r#"{"args":{"preview":true},"cmd":"locate","selector":"a.py@L1:x"}"#,
    ),
    (
        "complete",
        r#"{"resolve":true,"selector":"a.py@L1:x"}"#,
        r#"{"args":{"resolve":true},"cmd":"complete","selector":"a.py@L1:x"}"#,
    ),
    (
        "types",
        r#"{"direction":"subtypes","selector":"a.py@L1:x"}"#,
        r#"{"args":{"subtypes":true},"cmd":"types","selector":"a.py@L1:x"}"#,
    ),
    (
        "inlay",
        r#"{"file":"a.py","range":"1,1->2,1"}"#,
        r#"{"args":{"file":"a.py","range":"1,1->2,1"},"cmd":"inlay"}"#,
    ),
    (
        "format",
        r#"{"allow_dirty":true,"apply":true,"file":"a.ts","range":"1,1->2,1","tab_size":2,"tabs":true}"#,
        r#"{"args":{"allow-dirty":true,"apply":true,"file":"a.ts","range":"1,1->2,1","tab-size":2,"tabs":true},"cmd":"format"}"#,
    ),
    (
        "rename",
        r#"{"allow_dirty":true,"apply":true,"new_name":"y","selector":"a.py@L1:x"}"#,
        r#"{"args":{"allow-dirty":true,"apply":true,"new_name":"y"},"cmd":"rename","selector":"a.py@L1:x"}"#,
    ),
    (
        "rename_file",
        r#"{"allow_dirty":true,"apply":true,"dst":"b.py","src":"a.py"}"#,
        r#"{"args":{"allow-dirty":true,"apply":true,"dst":"b.py","src":"a.py"},"cmd":"rename-file"}"#,
    ),
    (
        "apply",
        r#"{"allow_dirty":true,"apply":true,"patch":"--- a/a.py\n+++ b/a.py\n","require_clean":true}"#,
        r#"{"args":{"allow-dirty":true,"apply":true,"patch":"@PATCHES@/cb1767e7471954eff991e7735560e881bf3f3842b4b386f46a3d142b43368ab2.diff","require-clean":true},"cmd":"apply"}"#,
    ),
    (
        "edit",
        r#"{"allow_dirty":true,"apply":true,"force":true,"mode":"replace_body","require_clean":true,"selector":"a.py@L1:x","text":"pass"}"#,
        r#"{"args":{"allow-dirty":true,"apply":true,"force":true,"replace-body":true,"require-clean":true,"text":"@PATCHES@/d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1.diff"},"cmd":"edit","selector":"a.py@L1:x"}"#,
    ),
    (
        "code_actions",
        r#"{"allow_dirty":true,"apply":0,"dry_run":true,"kind":"quickfix","selector":"a.py@L1:x"}"#,
        r#"{"args":{"allow-dirty":true,"apply":"0","dry-run":true,"kind":"quickfix"},"cmd":"code-actions","selector":"a.py@L1:x"}"#,
    ),
    (
        "check",
        r#"{"patch":"--- a/a.py\n+++ b/a.py\n","reward":"pr-v2","test_budget":5,"tests":true}"#,
        r#"{"args":{"patch":"@PATCHES@/cb1767e7471954eff991e7735560e881bf3f3842b4b386f46a3d142b43368ab2.diff"},"cmd":"check"}"#,
    ),
    (
        "impact",
        r#"{"depth":2,"selector":"a.py@L1:x"}"#,
        r#"{"args":{"depth":2},"cmd":"impact","selector":"a.py@L1:x"}"#,
    ),
    (
        "impact",
        r#"{"patch":"--- a/a.py\n+++ b/a.py\n"}"#,
        r#"{"args":{"patch":"@PATCHES@/cb1767e7471954eff991e7735560e881bf3f3842b4b386f46a3d142b43368ab2.diff"},"cmd":"impact"}"#,
    ),
    ("status", r#"{}"#, r#"{"cmd":"status"}"#),
    ("capabilities", r#"{}"#, r#"{"cmd":"capabilities"}"#),
    ("reload", r#"{}"#, r#"{"cmd":"reload"}"#),
    (
        "request",
        r#"{"method":"textDocument/hover","target":"a.py@L1:x"}"#,
        r#"{"args":{"method":"textDocument/hover","target":"a.py@L1:x"},"cmd":"request"}"#,
    ),
    (
        "request",
        r#"{"method":"workspace/symbol","payload":{"query":"x"}}"#,
        r#"{"args":{"method":"workspace/symbol","payload":"{\"query\":\"x\"}"},"cmd":"request"}"#,
    ),
    (
        "calls",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"cmd":"calls","selector":"a.py@L1:x"}"#,
    ),
    (
        "calls",
        r#"{"direction":"outgoing","selector":"a.py@L1:x"}"#,
        r#"{"args":{"outgoing":true},"cmd":"calls","selector":"a.py@L1:x"}"#,
    ),
    (
        "calls",
        r#"{"direction":"both","selector":"a.py@L1:x"}"#,
        r#"{"cmd":"calls","selector":"a.py@L1:x"}"#,
    ),
    (
        "types",
        r#"{"direction":"supertypes","selector":"a.py@L1:x"}"#,
        r#"{"args":{"supertypes":true},"cmd":"types","selector":"a.py@L1:x"}"#,
    ),
    (
        "edit",
        r#"{"mode":"delete","selector":"a.py@L1:x"}"#,
        r#"{"args":{"allow-dirty":false,"apply":false,"delete":true,"force":false,"require-clean":false},"cmd":"edit","selector":"a.py@L1:x"}"#,
    ),
    (
        "edit",
        r#"{"mode":"insert-after","selector":"a.py@L1:x","text":"def g(): pass"}"#,
        r#"{"args":{"allow-dirty":false,"apply":false,"force":false,"insert-after":true,"require-clean":false,"text":"@PATCHES@/313fcb8a0b3e3cf76efb8dcc5d16794ab80d002d52709dbb55d524ee961ca91a.diff"},"cmd":"edit","selector":"a.py@L1:x"}"#,
    ),
    (
        "code_actions",
        r#"{"apply":"Add import","selector":"a.py@L1:x"}"#,
        r#"{"args":{"allow-dirty":false,"apply":"Add import","dry-run":false},"cmd":"code-actions","selector":"a.py@L1:x"}"#,
    ),
    (
        "code_actions",
        r#"{"selector":"a.py@L1:x"}"#,
        r#"{"args":{"allow-dirty":false,"dry-run":false},"cmd":"code-actions","selector":"a.py@L1:x"}"#,
    ),
    ("diag", r#"{}"#, r#"{"cmd":"diag"}"#),
    (
        "diag",
        r#"{"files":["a.py"]}"#,
        r#"{"args":{"targets":["a.py"]},"cmd":"diag"}"#,
    ),
    (
        "rename_file",
        r#"{"new_path":"b.py","path":"a.py"}"#,
        r#"{"args":{"allow-dirty":false,"apply":false,"dst":"b.py","src":"a.py"},"cmd":"rename-file"}"#,
    ),
    (
        "check",
        r#"{"patch":"x"}"#,
        r#"{"args":{"patch":"@PATCHES@/2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881.diff"},"cmd":"check"}"#,
    ),
    (
        "request",
        r#"{"method":"workspace/symbol","payload":"s"}"#,
        r#"{"args":{"method":"workspace/symbol","payload":"\"s\""},"cmd":"request"}"#,
    ),
];

fn patches() -> String {
    std::env::temp_dir()
        .join("lanser-patches")
        .to_string_lossy()
        .into_owned()
}

/// The tools are the catalog's operations, one each, every one titled and described by its
/// overlay entry: no tool is declared beside the generated ones.
#[test]
fn every_operation_has_one_generated_tool_with_its_overlay() {
    let tools = all();
    let ops = crate::commands::catalog::operations();
    let names: Vec<&str> = tools.iter().map(|t| t.cmd.as_str()).collect();
    let order: Vec<&str> = crate::commands::overlay::OVERLAYS
        .iter()
        .map(|o| o.op)
        .collect();
    assert_eq!(names, order, "the tools, in the overlay's order");
    assert_eq!(tools.len(), ops.len());
    for t in &tools {
        let op = ops.iter().find(|o| o.name == t.cmd).unwrap();
        let overlay = crate::commands::overlay::of(&op.name).expect("an overlay entry");
        assert_eq!(t.name, super::generic::tool_name(&op.name));
        assert_eq!(t.title, overlay.title, "{}", t.name);
        assert!(t.description.starts_with(&op.description()), "{}", t.name);
        assert_eq!(t.schema, super::generic::input_schema(op), "{}", t.name);
        let hints = op.hints();
        assert_eq!(
            (t.read_only, t.destructive, t.idempotent),
            (hints.read_only, hints.destructive, hints.idempotent),
            "{}",
            t.name
        );
    }
    let unique: BTreeSet<&String> = tools.iter().map(|t| &t.name).collect();
    assert_eq!(unique.len(), tools.len(), "tool names repeat");
}

/// Each call the hand-written tools took asks, through the generated tool, the request the
/// hand-written one built: the same operation, selector and `request.args` (so the same
/// bundle), and the same global options and paging.
#[test]
fn generated_tools_ask_what_the_hand_written_ones_asked() {
    let root = std::env::temp_dir();
    let tools = all();
    let mut parser = LineParser::default();
    let mut asked = BTreeSet::new();
    for (name, args, former) in FORMER_LINES {
        let spec = tools.iter().find(|s| s.name == *name).unwrap();
        let args: Value = serde_json::from_str(args).unwrap();
        let call = spec
            .call(args.clone(), &root)
            .unwrap_or_else(|e| panic!("{name} {args}: {e}"));
        let former = former.replace("@PATCHES@", &patches());
        let old = parser.parse(&former).unwrap();
        let new = parser
            .parse(&call.line.to_string())
            .unwrap_or_else(|e| panic!("{name} {args}: its line {} is refused: {e}", call.line));
        assert_eq!(
            (new.op.name(), new.selector(), new.op.args()),
            (old.op.name(), old.selector(), old.op.args()),
            "{name} {args}: {} (was {former})",
            call.line
        );
        let paging = args.get("limit").is_some();
        assert_eq!(
            (call.offset, call.limit),
            if paging { (1, 3) } else { (0, 50) }
        );
        let check = *name == "check" && args.get("reward").is_some();
        assert_eq!(call.globals.reward.is_some(), check, "{name}");
        assert_eq!(
            (call.globals.tests, call.globals.test_budget.is_some()),
            (check, check)
        );
        asked.insert(spec.cmd.clone());
    }
    assert!(asked.len() >= 27, "only {} tools compared", asked.len());
    // A bad choice is refused as the hand-written tools refused it.
    let calls = tools.iter().find(|s| s.name == "calls").unwrap();
    let bad = calls.call(
        json!({"selector": "a.py@L1:x", "direction": "sideways"}),
        &root,
    );
    assert_eq!(
        bad.unwrap_err(),
        "direction \"sideways\": use incoming, outgoing or both"
    );
    let edit = tools.iter().find(|s| s.name == "edit").unwrap();
    let bad = edit.call(json!({"selector": "a.py@L1:x", "mode": "rewrite"}), &root);
    assert!(bad
        .unwrap_err()
        .starts_with("mode \"rewrite\": use replace_body, replace"));
    let actions = tools.iter().find(|s| s.name == "code_actions").unwrap();
    let bad = actions.call(json!({"selector": "a.py@L1:x", "apply": [1]}), &root);
    assert_eq!(bad.unwrap_err(), "apply [1]: an index or a title");
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
    assert!(prep.read_only);
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
    // The envelope's knobs are taken by every writing tool, though not listed.
    let rename = tools.iter().find(|s| s.name == "rename").unwrap();
    let props = rename.schema["properties"].as_object().unwrap();
    for knob in crate::commands::overlay::UNLISTED {
        assert!(!props.contains_key(*knob), "{knob} is listed");
    }
    let args = json!({"selector": "a.py@L1:x", "new_name": "y", "apply": true,
        "allow": ["src/**"], "deny": ["src/gen/**"], "apply_mode": "git",
        "deny_apply_on_ambiguous": true});
    let line = rename.call(args, &root).unwrap().line;
    let asked = parser.parse(&line.to_string()).unwrap().op.args();
    assert_eq!(
        (&asked["allow"], &asked["deny"], &asked["apply-mode"]),
        (&json!(["src/**"]), &json!(["src/gen/**"]), &json!("git")),
        "{asked:?}"
    );
    assert_eq!(asked["deny-apply-on-ambiguous"], true, "{asked:?}");
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
