//! Freshness at scale (issue 13): on a large generated tree, the warm daemon keeps its index
//! current from file-system events, and every kind of outside change — an edit, a creation in
//! a new directory, a deletion, a rename, a `git checkout`, a same-size rewrite with its mtime
//! put back, an edit within one timestamp tick — is answered correctly by the very next
//! request, with the bytes `--no-daemon` prints. An overflowed event queue (simulated) falls
//! back to a rescan and still answers correctly.

use crate::daemon::Warm;
use crate::support::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;

/// 1,500 more modules and 4,000 other files beside the demo project.
fn grow(ws: &Path) {
    for i in 0..1500 {
        let dir = ws.join(format!("gen/svc{:02}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("__init__.py"), "").unwrap();
        std::fs::write(
            dir.join(format!("mod{i:04}.py")),
            format!("class Model{i}:\n    def load(self) -> int:\n        return {i}\n"),
        )
        .unwrap();
    }
    for i in 0..4000 {
        let dir = ws.join(format!("assets/a{:02}", i / 200));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.json")), format!("{{\"id\": {i}}}")).unwrap();
    }
    let nm = ws.join("node_modules/pkg");
    std::fs::create_dir_all(&nm).unwrap();
    std::fs::write(nm.join("ignored.py"), "x = 1\n").unwrap();
}

fn def_lines(o: &std::process::Output) -> Vec<(String, u32)> {
    locs(&bundle(o)["facts"]["definitions"])
        .into_iter()
        .map(|(p, r)| (p, r[0] + 1))
        .collect()
}

/// The daemon's answer to `q`, checked against `want` and against `--no-daemon`'s bytes.
fn answers(w: &Warm, q: &[&str], want: &[(&str, u32)], what: &str) {
    let warm = w.run(q);
    let cold = w.run(&[q, &["--no-daemon"]].concat());
    assert_eq!(
        warm.status.code(),
        cold.status.code(),
        "{what}: {}",
        stderr(&warm)
    );
    assert_eq!(
        stdout(&warm),
        stdout(&cold),
        "{what}: daemon vs --no-daemon"
    );
    if warm.status.success() {
        let want: Vec<(String, u32)> = want.iter().map(|(p, l)| (p.to_string(), *l)).collect();
        assert_eq!(def_lines(&warm), want, "{what}");
    }
}

fn git(ws: &Path, args: &[&str]) {
    let s = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(s.status.success(), "git {args:?}: {}", stderr(&s));
}

const Q: [&str; 3] = ["def", "cli.py@L17:add_item", "--json"];

#[test]
fn every_kind_of_outside_change_is_answered_by_the_next_request() {
    let w = Warm::new("demo");
    grow(&w.ws);
    git(&w.ws, &["init", "-q", "-b", "main"]);
    git(&w.ws, &["add", "-A"]);
    git(&w.ws, &["commit", "-q", "-m", "base"]);
    answers(&w, &Q, &[("inventory/store.py", 25)], "first answer");
    let status = w.idle_status();
    assert!(status["pythonFiles"].as_u64().unwrap() > 1500, "{status}");
    assert_eq!(status["index"]["mode"], "events", "{status}");

    // An edit: the definition moves down two lines.
    let store = w.ws.join("inventory/store.py");
    let base = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("# one\n# two\n{base}")).unwrap();
    answers(&w, &Q, &[("inventory/store.py", 27)], "edit");

    // Two same-size rewrites within one timestamp tick: only the content can tell them apart.
    std::fs::write(&store, format!("#1\n#2\n{base}")).unwrap();
    answers(&w, &Q, &[("inventory/store.py", 27)], "rewrite");
    std::fs::write(&store, format!("\n\n\n\n\n\n{base}")).unwrap();
    answers(
        &w,
        &Q,
        &[("inventory/store.py", 31)],
        "same tick, same size",
    );

    // A same-size rewrite with its mtime put back (`touch -r`).
    let reference = w.ws.join("ref.stamp");
    std::fs::write(&reference, "").unwrap();
    let touch = |p: &Path| {
        let s = Command::new("touch")
            .arg("-r")
            .arg(&reference)
            .arg(p)
            .status()
            .unwrap();
        assert!(s.success());
    };
    touch(&store);
    answers(&w, &Q, &[("inventory/store.py", 31)], "touched");
    std::fs::write(&store, format!("#a\n#b\n\n\n{base}")).unwrap();
    touch(&store);
    answers(&w, &Q, &[("inventory/store.py", 29)], "touch -r");

    // `git checkout` puts the committed text back.
    git(&w.ws, &["checkout", "-q", "--", "inventory/store.py"]);
    answers(&w, &Q, &[("inventory/store.py", 25)], "git checkout");

    // A module created in a brand-new directory, and a file that uses it.
    std::fs::create_dir_all(w.ws.join("extra/deeper")).unwrap();
    std::fs::write(w.ws.join("extra/__init__.py"), "").unwrap();
    std::fs::write(w.ws.join("extra/deeper/__init__.py"), "").unwrap();
    std::fs::write(
        w.ws.join("extra/deeper/helpers.py"),
        "\n\ndef helper() -> int:\n    return 1\n",
    )
    .unwrap();
    std::fs::write(
        w.ws.join("use_helper.py"),
        "from extra.deeper.helpers import helper\n\nhelper()\n",
    )
    .unwrap();
    let uq = ["def", "use_helper.py@L3:helper", "--json"];
    answers(&w, &uq, &[("extra/deeper/helpers.py", 3)], "created");

    // Renamed away: the import no longer resolves to the module file.
    std::fs::rename(
        w.ws.join("extra/deeper/helpers.py"),
        w.ws.join("extra/deeper/tools.py"),
    )
    .unwrap();
    let after = w.run(&uq);
    assert!(
        !def_lines(&after)
            .iter()
            .any(|(p, _)| p == "extra/deeper/helpers.py"),
        "renamed"
    );
    answers(
        &w,
        &uq,
        &def_lines(&after)
            .iter()
            .map(|(p, l)| (p.as_str(), *l))
            .collect::<Vec<_>>(),
        "renamed",
    );

    // Deleted: a selector into it is not found, as in-process.
    std::fs::remove_file(w.ws.join("use_helper.py")).unwrap();
    let gone = w.run(&uq);
    assert_eq!(gone.status.code(), Some(3), "{}", stderr(&gone));
    answers(&w, &uq, &[], "deleted");

    // A `py://` selector into the new directory, and the index's count of sources.
    std::fs::write(
        w.ws.join("extra/deeper/helpers.py"),
        "\n\ndef helper() -> int:\n    return 1\n",
    )
    .unwrap();
    let located = bundle(&w.ok(&["locate", "py://extra.deeper.helpers#helper", "--json"]));
    assert_eq!(located["resolution"]["resolved"]["range"][0], 2);
    let s = w.idle_status();
    assert_eq!(s["index"]["fallbackRescans"], 0, "{s}");
}

#[test]
fn an_overflowed_event_queue_falls_back_to_a_rescan_and_answers_correctly() {
    let w = Warm::new("demo");
    grow(&w.ws);
    let run = |args: &[&str]| {
        w.cmd(args)
            .env("LANSER_TEST_WATCH_OVERFLOW", "1")
            .output()
            .unwrap()
    };
    let first = run(&Q);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        def_lines(&first),
        vec![("inventory/store.py".to_string(), 25)]
    );
    let store = w.ws.join("inventory/store.py");
    let base = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("# one\n# two\n{base}")).unwrap();
    let edited = run(&Q);
    assert_eq!(
        def_lines(&edited),
        vec![("inventory/store.py".to_string(), 27)]
    );
    assert_eq!(
        stdout(&edited),
        stdout(&w.run(&[&Q[..], &["--no-daemon"]].concat()))
    );
    let s: Value = w.idle_status();
    assert!(s["index"]["fallbackRescans"].as_u64().unwrap() >= 1, "{s}");
    assert!(
        s["index"]["lastFallback"]
            .as_str()
            .unwrap()
            .contains("overflow"),
        "{s}"
    );
}

/// An edit that lands while a request runs (on demand: a debug-build hook edits the file once,
/// after the command has run and before its bundle records the documents' versions) is never
/// mixed into the answer: the daemon sees it, answers again on the new text, and the bundle is
/// the one `--no-daemon` gives for the files as they are now.
#[test]
fn an_edit_while_a_request_runs_is_answered_on_the_new_text() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    let o = w
        .cmd(&q)
        .env("LANSER_TEST_EDIT_DURING", "inventory/store.py")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(w.ws.join("inventory/store.py")).unwrap();
    assert!(
        text.starts_with("# edited while a request ran\n"),
        "the hook ran"
    );
    // Before the edit the definition was on line 25.
    assert_eq!(def_lines(&o), vec![("inventory/store.py".to_string(), 26)]);
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let b: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        b["meta"]["docVersions"]["inventory/store.py"],
        format!("sha256:{hex}").as_str()
    );
    assert_eq!(
        stdout(&o),
        stdout(&w.run(&[&q[..], &["--no-daemon"]].concat()))
    );
}

/// A file of a language beyond the first six, changed behind the daemon's back, is answered
/// from its new text: the index tracks every type a configured server takes (here PHP), and
/// intelephense, which re-reads a changed file only a while after the watched-file event, is
/// given it by opening it. Before, the daemon's index saw no `.php` file and kept answering
/// the definition's old line.
#[test]
fn a_php_file_changed_behind_the_daemon_is_answered_from_its_new_text() {
    let w = Warm::new("php");
    w.link_server("intelephense");
    let app = std::fs::read_to_string(w.ws.join("src/app.php")).unwrap();
    let line = app
        .lines()
        .position(|l| l.contains("$store->add('tea'"))
        .unwrap()
        + 1;
    let q = format!("src/app.php@L{line}:add");
    let decl = |ws: &Path| {
        let text = std::fs::read_to_string(ws.join("src/Store.php")).unwrap();
        let at = text.find("/** Add an item;").unwrap();
        text[..at].matches('\n').count() as u32 + 1
    };
    let before = decl(&w.ws);
    answers(
        &w,
        &["def", &q, "--json"],
        &[("src/Store.php", before)],
        "first",
    );
    let store = w.ws.join("src/Store.php");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, text.replacen("\nclass", "\n\n\n\nclass", 1)).unwrap();
    let after = decl(&w.ws);
    assert_eq!(after, before + 3);
    answers(
        &w,
        &["def", &q, "--json"],
        &[("src/Store.php", after)],
        "after the edit",
    );
    assert!(w.idle_status()["index"]["generation"].as_u64() > Some(0));
}
