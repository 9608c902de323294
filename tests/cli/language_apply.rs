//! Rename `--apply` through each language's real server, on copies: the preview writes
//! nothing, the apply writes exactly the renamed text into every file that names the symbol
//! (computed from the fixture text, never from lanser's answer) and nothing else.

use crate::languages::{have_go, have_rust_analyzer, indexed_c_copy};
use crate::support::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Every file of `root` (relative path → bytes), `.git` and the servers' caches aside
/// (clangd's index, rust-analyzer's `target/`, written while they work).
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::mutations::snapshot(root)
        .into_iter()
        .filter(|(rel, _)| !rel.starts_with(".cache/") && !rel.starts_with("target/"))
        .collect()
}

/// Preview, then apply, the rename at `sel` to `new`; afterwards each file in `changes` is its
/// old text with each `(from, to)` replaced, every other file byte-identical.
fn rename_applies(ws: &Path, sel: &str, new: &str, changes: &[(&str, &[(&str, &str)])]) {
    let w = ws.to_string_lossy().into_owned();
    let before = files(ws);
    let o = run(&["rename", sel, new, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{sel}: {}", stderr(&o));
    assert_eq!(files(ws), before, "{sel}: a preview writes nothing");
    let o = lanser()
        .args([
            "rename",
            sel,
            new,
            "--workspace",
            &w,
            "--apply",
            "--allow-dirty",
        ])
        .args(["--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{sel}: {}", stderr(&o));
    let mut want = before.clone();
    for (file, reps) in changes {
        let mut text = String::from_utf8(before[*file].clone()).unwrap();
        for (from, to) in *reps {
            assert!(text.contains(from), "{from:?} not in {file}");
            text = text.replace(from, to);
        }
        want.insert(file.to_string(), text.into_bytes());
    }
    let after = files(ws);
    for (f, bytes) in &want {
        assert_eq!(
            String::from_utf8_lossy(&after[f]),
            String::from_utf8_lossy(bytes),
            "{sel}: {f}"
        );
    }
}

#[test]
fn c_rename_applies_to_the_header_the_definition_and_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let c = indexed_c_copy(dir.path());
    let at = line_with(&c, "src/store.c", "int store_add(");
    let same: &[(&str, &str)] = &[("store_add(", "store_put(")];
    rename_applies(
        &c,
        &format!("src/store.c@L{at}:store_add"),
        "store_put",
        &[
            ("src/store.c", same),
            ("src/store.h", same),
            ("src/main.c", same),
        ],
    );
}

#[test]
fn shell_rename_applies_to_the_function_and_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let sh = dir.path().join("sh");
    copy_tree(&fixture("sh"), &sh);
    let at = line_with(&sh, "lib.sh", "greet() {");
    rename_applies(
        &sh,
        &format!("lib.sh@L{at}:greet"),
        "hello",
        &[
            ("lib.sh", &[("greet() {", "hello() {")]),
            (
                "main.sh",
                &[("greet world", "hello world"), ("greet \"", "hello \"")],
            ),
        ],
    );
}

#[test]
fn go_rename_applies_through_gopls() {
    if !have_go() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    copy_tree(&fixture("go"), &go);
    let at = line_with(&go, "main.go", "func checkout()");
    rename_applies(
        &go,
        &format!("main.go@L{at}:checkout"),
        "pay",
        &[("main.go", &[("checkout()", "pay()")])],
    );
}

#[test]
fn rust_rename_applies_through_rust_analyzer() {
    if !have_rust_analyzer() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rs = dir.path().join("rust");
    copy_tree(&fixture("rust"), &rs);
    // rust-analyzer writes Cargo.lock on load: let it, then take the snapshot.
    let w = rs.to_string_lossy().into_owned();
    let at = line_with(&rs, "src/store.rs", "pub fn add(");
    let sel = format!("src/store.rs@L{at}:add");
    let o = run(&["hover", &sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    rename_applies(
        &rs,
        &sel,
        "put",
        &[
            ("src/store.rs", &[("pub fn add(", "pub fn put(")]),
            ("src/lib.rs", &[("s.add(", "s.put(")]),
            ("src/broken.rs", &[("s.add(", "s.put(")]),
        ],
    );
}
