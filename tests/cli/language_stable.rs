//! Bundles of every language's server are byte-stable: the same `refs` bundle from fresh
//! processes, in the fixture and in a copy at another path (locations are workspace-relative,
//! nothing of the run leaks in).

use crate::languages::{have_go, have_rust_analyzer, indexed_c_copy};
use crate::support::*;
use std::path::Path;

fn refs_id(ws: &Path, sel: &str) -> String {
    let w = ws.to_string_lossy().into_owned();
    let o = run(&["refs", sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{sel}: {}", stderr(&o));
    let b = bundle(&o);
    assert!(
        b["facts"]["references"]
            .as_array()
            .is_some_and(|r| r.len() >= 2),
        "{sel}: {}",
        b["facts"]
    );
    b["bundleId"].as_str().unwrap().to_string()
}

/// The same bundle twice in `a` (fresh processes) and once in `b`.
fn stable(a: &Path, b: &Path, rel: &str, needle: &str, name: &str) {
    let at = line_with(a, rel, needle);
    let sel = format!("{rel}@L{at}:{name}");
    let first = refs_id(a, &sel);
    assert_eq!(refs_id(a, &sel), first, "{sel}: fresh processes");
    assert_eq!(refs_id(b, &sel), first, "{sel}: a copy");
}

fn copy_of(dir: &Path, name: &str, sub: &str) -> std::path::PathBuf {
    let to = dir.join(sub).join(name);
    copy_tree(&fixture(name), &to);
    to
}

#[test]
fn bundles_are_the_same_in_fresh_processes_and_in_a_copy_for_every_server() {
    let dir = tempfile::tempdir().unwrap();
    let c = |name: &str, sub: &str| copy_of(dir.path(), name, sub);
    stable(
        &fixture("sh"),
        &c("sh", "b"),
        "lib.sh",
        "greet() {",
        "greet",
    );
    // Two copies with their compilation databases (absolute paths: cross-file references
    // need clangd's background index).
    let (ca, cb) = (dir.path().join("ca"), dir.path().join("cb"));
    stable(
        &indexed_c_copy(&ca),
        &indexed_c_copy(&cb),
        "src/main.c",
        "store_add(&s",
        "store_add",
    );
    if have_go() {
        stable(
            &fixture("go"),
            &c("go", "b"),
            "store/store.go",
            "func (s *Store) Add(",
            "Add",
        );
    }
    if have_rust_analyzer() {
        // Two copies: rust-analyzer writes Cargo.lock beside the manifest.
        stable(
            &c("rust", "a"),
            &c("rust", "b"),
            "src/store.rs",
            "pub fn add(",
            "add",
        );
    }
}

/// `def` at `name` on the line of `needle` in `rel` lands in a library, named `want`.
fn def_lands_in(ws: &Path, rel: &str, needle: &str, name: &str, want: &str) {
    let at = line_with(ws, rel, needle);
    let w = ws.to_string_lossy().into_owned();
    let sel = format!("{rel}@L{at}:{name}");
    let o = run(&["def", &sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{sel}: {}", stderr(&o));
    let got = locs(&bundle(&o)["facts"]["definitions"]);
    assert_eq!(got.len(), 1, "{sel}: {got:?}");
    assert_eq!(got[0].0, want, "{sel}");
}

#[test]
fn a_definition_in_a_toolchain_or_package_is_named_the_same_on_every_machine() {
    def_lands_in(
        &fixture("ts"),
        "src/store.ts",
        "this.items.push(item);",
        "push",
        "node_modules://typescript/lib/lib.es5.d.ts",
    );
    if have_go() {
        def_lands_in(
            &fixture("go"),
            "main.go",
            "fmt.Println(",
            "Println",
            "goroot://fmt/print.go",
        );
    }
    if have_rust_analyzer() {
        let dir = tempfile::tempdir().unwrap();
        let rs = copy_of(dir.path(), "rust", "a");
        def_lands_in(
            &rs,
            "src/store.rs",
            "self.items.push(item);",
            "push",
            "rust-std://alloc/src/vec/mod.rs",
        );
    }
}
