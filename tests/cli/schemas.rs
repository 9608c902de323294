//! Schema contracts (issue 7): every bundle the suite sees validates against the checked-in
//! `schemas/bundle.schema.json` (the helpers in support.rs call [`collect`] on every stdout, so
//! all tests feed it; trace files go through [`check_trace`]); the binary's export equals
//! `schemas/`; hand-made invalid documents are rejected with their JSON pointers, by lanser and
//! by Python's `jsonschema` (an independent implementation); every flag has a help line.

use crate::support::*;
use lanser::schema::{Kind, Validator};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Bundles validated in place so far (in this test process).
static CHECKED: AtomicUsize = AtomicUsize::new(0);

/// The validator for the checked-in schema of `kind` (not the binary's export: the two are
/// compared by `the_export_is_the_checked_in_schemas`).
fn checked_in(kind: Kind) -> &'static Validator {
    static V: OnceLock<Vec<Validator>> = OnceLock::new();
    let all = V.get_or_init(|| {
        Kind::ALL
            .iter()
            .map(|k| {
                let path = repo().join("schemas").join(k.file_name());
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
                Validator::from_schema(&schema).expect("checked-in schema compiles")
            })
            .collect()
    });
    &all[Kind::ALL.iter().position(|k| *k == kind).unwrap()]
}

fn is_bundle(v: &Value) -> bool {
    v.get("request").is_some() && v.get("meta").is_some()
}

/// Validate one bundle; panics naming every violation. Other JSON the helpers parse (e.g.
/// `daemon status --json`) is not a bundle and is left alone.
pub fn collect_value(v: &Value) {
    if !is_bundle(v) {
        return;
    }
    let violations = checked_in(Kind::Bundle).violations(v);
    assert!(
        violations.is_empty(),
        "a bundle violates schemas/bundle.schema.json: {violations:#?}\n{v}"
    );
    CHECKED.fetch_add(1, Ordering::Relaxed);
    // LANSER_SCHEMA_LOG=FILE: append `cmd status` per bundle checked (to see the coverage).
    if let Some(log) = std::env::var_os("LANSER_SCHEMA_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            // One write per line: tests run in parallel.
            let line = format!("{} {}\n", v["request"]["cmd"], v["status"]);
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// Validate every bundle line of a command's stdout (other output is left alone).
pub fn collect(stdout: &[u8]) {
    let text = String::from_utf8_lossy(stdout);
    let docs: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    };
    docs.iter().filter(|v| is_bundle(v)).for_each(collect_value);
}

/// Validate a bundle the library produced.
pub fn collect_bundle(b: &lanser::bundle::Bundle) {
    collect_value(&serde_json::to_value(b).unwrap());
}

/// Validate every record of a trace file against schemas/trace.schema.json.
pub fn check_trace(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        let violations = checked_in(Kind::Trace).violations(&v);
        assert!(
            violations.is_empty(),
            "{}:{}: {violations:#?}",
            path.display(),
            i + 1
        );
    }
}

#[test]
fn the_export_is_the_checked_in_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["schema", "export", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for kind in Kind::ALL {
        let want = read(&repo().join("schemas"), &kind.file_name());
        let exported = read(dir.path(), &kind.file_name());
        assert!(
            exported == want,
            "schemas/{} differs from `lanser schema export`: run `cargo run -- schema export \
             schemas` and commit the diff (it is a contract change)",
            kind.file_name()
        );
        let printed = run(&["schema", kind.name()]);
        assert_eq!(stdout(&printed), want, "lanser schema {}", kind.name());
        let schema: Value = serde_json::from_str(&want).unwrap();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema",
            "{}",
            kind.name()
        );
    }
    let want = read(&repo().join("schemas"), "operations.json");
    assert!(
        read(dir.path(), "operations.json") == want,
        "schemas/operations.json differs from `lanser schema export`: run `cargo run -- schema \
         export schemas` (and scripts/gen_python_types.sh, which copies it into the SDK)"
    );
    assert_eq!(stdout(&run(&["schema", "operations"])), want);
    let out = dir.path().join("one.json");
    let o = run(&["schema", "bundle", "--out", out.to_str().unwrap()]);
    assert!(o.status.success() && stdout(&o).is_empty());
    assert_eq!(
        read(dir.path(), "one.json"),
        read(&repo().join("schemas"), "bundle.schema.json")
    );
}

/// A bundle lanser printed (locate needs no server).
fn sample_bundle() -> Value {
    let ws = fixture("srcpkg");
    let o = run(&[
        "--json",
        "--workspace",
        ws.to_str().unwrap(),
        "locate",
        "src/shapes/intl.py@R(12,1->12,20)",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    bundle(&o)
}

/// Hand-made invalid documents: (kind, name, document, a pointer the report must name).
fn invalid_examples(good: &Value) -> Vec<(Kind, &'static str, Value, &'static str)> {
    let mut arity = good.clone();
    arity["resolution"]["resolved"]["range"] = json!([11, 0, 11]);
    let mut status = good.clone();
    status["status"] = json!("maybe");
    let mut no_id = good.clone();
    no_id.as_object_mut().unwrap().remove("bundleId");
    let mut selector_kind = good.clone();
    selector_kind["request"]["selector"] = json!({"kind": "nearby", "path": "a.py"});
    let mut facts = good.clone();
    facts["facts"]["target"]["range"] = json!("12:1");
    let mut id = good.clone();
    id["bundleId"] = json!("sha256:XYZ");
    let mut extra = good.clone();
    extra["facts"]["surprise"] = json!(1);
    vec![
        (
            Kind::Bundle,
            "range arity",
            arity,
            "/resolution/resolved/range",
        ),
        (Kind::Bundle, "unknown status", status, "/status"),
        (Kind::Bundle, "missing bundleId", no_id, ""),
        (Kind::Bundle, "malformed bundleId", id, "/bundleId"),
        (
            Kind::Bundle,
            "unknown selector kind",
            selector_kind,
            "/request/selector",
        ),
        (
            Kind::Bundle,
            "locate facts range",
            facts,
            "/facts/target/range",
        ),
        (Kind::Bundle, "unknown facts key", extra, "/facts"),
        (
            Kind::Selector,
            "unknown selector kind",
            json!({"kind": "nearby", "path": "a.py", "line": 3}),
            "",
        ),
        (
            Kind::Selector,
            "range arity",
            json!({"kind": "range", "path": "a.py", "start": [1, 2, 3], "end": [1, 4]}),
            "/start",
        ),
        (
            Kind::Batch,
            "unknown cmd",
            json!({"cmd": "fly", "selector": "a.py@L1:C1"}),
            "/cmd",
        ),
        (
            Kind::Batch,
            "unknown key",
            json!({"cmd": "def", "sel": "x"}),
            "",
        ),
        (
            Kind::Trace,
            "unknown type",
            json!({"type": "note", "text": "hi"}),
            "",
        ),
    ]
}

#[test]
fn the_schemas_reject_hand_made_invalid_documents_naming_the_pointer() {
    let good = sample_bundle();
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("good.json");
    std::fs::write(&ok, good.to_string()).unwrap();
    let o = run(&["schema", "validate", ok.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("1 of 1 bundle document(s) valid"),
        "{}",
        stdout(&o)
    );

    for (kind, name, doc, pointer) in invalid_examples(&good) {
        let f = dir.path().join("bad.json");
        std::fs::write(&f, doc.to_string()).unwrap();
        let o = run(&[
            "schema",
            "validate",
            "--kind",
            kind.name(),
            f.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stdout(&o));
        let at = if pointer.is_empty() {
            "(root)"
        } else {
            pointer
        };
        assert!(
            stdout(&o).contains(&format!(":1: {at}: ")),
            "{name}: no violation at {at}:\n{}",
            stdout(&o)
        );
        assert!(stdout(&o).contains("0 of 1"), "{name}: {}", stdout(&o));
    }
    // The checked-in schema agrees, in process.
    for (kind, name, doc, _) in invalid_examples(&good) {
        assert!(!checked_in(kind).violations(&doc).is_empty(), "{name}");
    }
}

#[test]
fn jsonl_reports_every_line_and_validate_batch_summarizes_a_directory() {
    let good = sample_bundle().to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut bad = sample_bundle();
    bad["status"] = json!("maybe");
    bad["resolution"]["resolved"]["range"] = json!([1]);
    std::fs::write(
        dir.path().join("a.jsonl"),
        format!("{good}\n\n{bad}\nnot json\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("b.json"), &good).unwrap();
    let a = dir.path().join("a.jsonl");
    let o = run(&["schema", "validate", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.contains(":3: /status: "), "{out}");
    assert!(out.contains(":3: /resolution/resolved/range: "), "{out}");
    assert!(out.contains(":4: (root): not JSON"), "{out}");
    assert!(out.contains("1 of 3 bundle document(s) valid"), "{out}");

    let o = run(&["schema", "validate-batch", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("1 of 2 file(s) valid, 2 of 4 bundle document(s) valid"),
        "{}",
        stdout(&o)
    );
    std::fs::remove_file(&a).unwrap();
    let o = run(&["schema", "validate-batch", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    let o = run(&["schema", "validate", "/nonexistent/x.json"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

/// Real documents of every contract, as (kind, document): lanser's bundles (ok and error, one
/// command and batch), the PositionSpec of every selector form as lanser parsed it, batch lines
/// that `lanser batch` accepts, and the records of a trace.
fn real_documents(dir: &Path) -> Vec<(Kind, Value)> {
    let ws = fixture("srcpkg");
    let ws = ws.to_str().unwrap();
    let mut docs = Vec::new();
    let sels = [
        "src/shapes/geometry.py@L5:C1",
        "src/shapes/intl.py@R(12,1->12,20)",
        "py://shapes.geometry#area_of",
        "ast://[module=shapes.geometry]/[def=area_of]",
        "anchor://src/shapes/geometry.py#\"def area_of\"",
    ];
    let mut lines = Vec::new();
    for sel in sels {
        let b = bundle(&run(&["--json", "--workspace", ws, "locate", sel]));
        assert_eq!(b["status"], "ok", "{sel}");
        let spec = b["request"]["selector"].clone();
        docs.push((Kind::Selector, spec.clone()));
        lines.push(json!({"cmd": "locate", "selector": spec}));
        lines.push(json!({"id": sel, "cmd": "locate", "selector": sel, "args": {"preview": true}}));
        docs.push((Kind::Bundle, b));
    }
    // An error bundle: a line past the end fails before any server is asked.
    let o = run(&[
        "--json",
        "--workspace",
        ws,
        "locate",
        "src/shapes/intl.py@L999:C1",
    ]);
    assert_eq!(o.status.code(), Some(3));
    docs.push((Kind::Bundle, bundle(&o)));
    let input = dir.join("in.jsonl");
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    docs.extend(lines.iter().map(|l| (Kind::Batch, l.clone())));
    text.push_str("{\"cmd\":\"fly\"}\n[1,2]\n");
    std::fs::write(&input, text).unwrap();
    let trace = dir.join("trace.jsonl");
    let o = run(&[
        "batch",
        "--in",
        input.to_str().unwrap(),
        "--out",
        "-",
        "--workspace",
        ws,
        "--trace-file",
        trace.to_str().unwrap(),
    ]);
    let out: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), lines.len() + 2);
    // The batch accepted every line the batch schema accepts, and only those.
    for b in &out[..lines.len()] {
        assert_eq!(b["status"], "ok", "{b}");
    }
    for b in &out[lines.len()..] {
        assert_eq!(b["status"], "error");
    }
    docs.extend(out.into_iter().map(|b| (Kind::Bundle, b)));
    check_trace(&trace);
    for line in read(dir, "trace.jsonl").lines() {
        docs.push((Kind::Trace, serde_json::from_str(line).unwrap()));
    }
    docs
}

#[test]
fn an_independent_validator_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let docs = real_documents(dir.path());
    for kind in Kind::ALL {
        let n = docs.iter().filter(|(k, _)| *k == kind).count();
        assert!(n > 0, "no real {} document", kind.name());
    }
    for (kind, doc) in &docs {
        let v = checked_in(*kind).violations(doc);
        assert!(v.is_empty(), "{}: {v:#?}\n{doc}", kind.name());
    }
    let valid: Vec<Value> = docs
        .iter()
        .map(|(kind, doc)| json!({"kind": kind.name(), "doc": doc}))
        .collect();
    std::fs::write(
        dir.path().join("valid.json"),
        Value::Array(valid).to_string(),
    )
    .unwrap();
    let good = docs
        .iter()
        .find(|(k, _)| *k == Kind::Bundle)
        .unwrap()
        .1
        .clone();
    let invalid: Vec<Value> = invalid_examples(&good)
        .into_iter()
        .map(|(kind, name, doc, _)| json!({"kind": kind.name(), "name": name, "doc": doc}))
        .collect();
    std::fs::write(
        dir.path().join("invalid.json"),
        Value::Array(invalid).to_string(),
    )
    .unwrap();
    let script = repo().join("tests").join("validate_schemas.py");
    let o = std::process::Command::new(crate::support::python())
        .arg(&script)
        .arg(repo().join("schemas"))
        .arg(dir.path().join("valid.json"))
        .arg(dir.path().join("invalid.json"))
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{} failed (on the pinned test environment, with jsonschema):\n{}{}",
        script.display(),
        stdout(&o),
        stderr(&o)
    );
    let summary = format!("4 schemas ok; {} valid document(s) accepted", docs.len());
    assert!(stdout(&o).contains(&summary), "{}", stdout(&o));
}

#[test]
fn the_helpers_validate_what_they_see() {
    let before = CHECKED.load(Ordering::Relaxed);
    sample_bundle();
    assert!(CHECKED.load(Ordering::Relaxed) > before);
}

/// Every flag and positional of every subcommand has a help line; every subcommand an about.
#[test]
fn every_flag_has_a_help_line() {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if matches!(id, "help" | "version") || arg.is_hide_set() {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} <{id}>"));
            }
        }
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name());
            if sub.get_about().is_none() && sub.get_name() != "help" {
                missing.push(format!("{p} (no about)"));
            }
            walk(sub, &p, missing);
        }
    }
    let mut missing = Vec::new();
    walk(&lanser::cli::Cli::command(), "lanser", &mut missing);
    assert!(missing.is_empty(), "no help line: {missing:#?}");
    for args in [
        vec!["--help"],
        vec!["schema", "--help"],
        vec!["rename", "--help"],
    ] {
        let o = run(&args);
        assert!(o.status.success(), "{args:?}");
    }
}

#[test]
fn completions_cover_the_command_tree() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("validate-batch") && out.contains("rename-file"),
            "{shell}"
        );
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The commands no other test runs with --json, so their facts meet the schema here.
#[test]
fn prepare_rename_and_code_actions_bundles_validate() {
    let ws = fixture("srcpkg");
    let ws = ws.to_str().unwrap();
    let sel = "tests/test_geometry.py@L10:Circle";
    for args in [
        vec!["prepare-rename", sel],
        vec!["code-actions", sel],
        vec!["code-actions", sel, "--kind", "source.organizeImports"],
    ] {
        let mut argv = vec!["--json", "--workspace", ws];
        argv.extend(&args);
        let o = run(&argv);
        let b = bundle(&o);
        assert_eq!(b["status"], "ok", "{args:?}: {}", stderr(&o));
        assert_eq!(b["request"]["cmd"], args[0]);
    }
}
