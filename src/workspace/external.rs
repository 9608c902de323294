//! How a file outside the workspace root is named in a bundle: by a scheme that says where it
//! comes from, with the part of its path that is the same on every machine, so that answers
//! that land in a library are stable across machines and copies.
//!
//! - `typeshed://stdlib/builtins.pyi`: the server's bundled typeshed;
//! - `goroot://fmt/print.go`: a Go toolchain's standard library (a directory with `src/runtime`
//!   and `VERSION`, wherever the toolchain is installed);
//! - `gomod://github.com/google/go-cmp@v0.6.0/cmp/compare.go`: the Go module cache;
//! - `rust-std://core/src/option.rs`: the Rust toolchain's library sources (rustup's
//!   `rust-src`);
//! - `crates://serde-1.0.210/src/lib.rs`: Cargo's registry sources;
//! - `node_modules://typescript/lib/lib.es5.d.ts`: an npm package outside the workspace (the
//!   TypeScript server's own `typescript`);
//! - `site-packages://requests/api.py`: an installed Python package (or anything else under a
//!   site-packages directory);
//! - else the absolute `file://` URI.
//!
//! A Python source is named only by the typeshed and site-packages schemes, as it always was.

use super::path_to_uri;
use std::path::Path;

/// The bundle name of `path`, a file outside the workspace.
pub fn name(path: &Path) -> String {
    let s = path.to_string_lossy().replace('\\', "/");
    if let Some(rest) = after(&s, "/typeshed-fallback/") {
        return format!("typeshed://{rest}");
    }
    let python = s.ends_with(".py") || s.ends_with(".pyi");
    if !python {
        if let Some(named) = toolchain(path, &s) {
            return named;
        }
    }
    for marker in ["/site-packages/", "/dist-packages/"] {
        if let Some(i) = s.rfind(marker) {
            return format!("site-packages://{}", &s[i + marker.len()..]);
        }
    }
    path_to_uri(path)
}

/// What follows the first `marker` in `s`.
fn after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    s.find(marker).map(|i| &s[i + marker.len()..])
}

/// The toolchain and package-manager schemes.
fn toolchain(path: &Path, s: &str) -> Option<String> {
    if let Some(rest) = goroot(path) {
        return Some(format!("goroot://{rest}"));
    }
    if let Some(rest) = after(s, "/pkg/mod/").filter(|r| !r.starts_with("cache/")) {
        return Some(format!("gomod://{rest}"));
    }
    if let Some(rest) = after(s, "/lib/rustlib/src/rust/library/") {
        return Some(format!("rust-std://{rest}"));
    }
    if let Some(rest) = after(s, "/registry/src/") {
        // `index.crates.io-<hash>/serde-1.0.210/…`: the index directory varies by machine.
        let (_, crate_path) = rest.split_once('/')?;
        return Some(format!("crates://{crate_path}"));
    }
    if let Some(i) = s.rfind("/node_modules/") {
        return Some(format!(
            "node_modules://{}",
            &s[i + "/node_modules/".len()..]
        ));
    }
    None
}

/// The path of a Go source below its toolchain's `src/`: the nearest ancestor `d` with
/// `d/src/runtime/` and `d/VERSION` of which the file is under `d/src/`.
fn goroot(path: &Path) -> Option<String> {
    if path.extension().is_none_or(|e| e != "go" && e != "s") {
        return None;
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "src") {
            let root = d.parent()?;
            if d.join("runtime").is_dir() && root.join("VERSION").is_file() {
                let rel = path.strip_prefix(d).ok()?;
                return Some(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolchain_and_package_schemes() {
        let cases = [
            (
                "/x/node_modules/pyright/dist/typeshed-fallback/stdlib/builtins.pyi",
                "typeshed://stdlib/builtins.pyi",
            ),
            (
                "/usr/lib/python3/site-packages/requests/api.py",
                "site-packages://requests/api.py",
            ),
            (
                "/home/u/go/pkg/mod/github.com/google/go-cmp@v0.6.0/cmp/compare.go",
                "gomod://github.com/google/go-cmp@v0.6.0/cmp/compare.go",
            ),
            (
                "/home/u/.rustup/toolchains/1.95.0-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/core/src/option.rs",
                "rust-std://core/src/option.rs",
            ),
            (
                "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.210/src/lib.rs",
                "crates://serde-1.0.210/src/lib.rs",
            ),
            (
                "/c/lanser/typescript-language-server/5.3.0/node_modules/typescript/lib/lib.es5.d.ts",
                "node_modules://typescript/lib/lib.es5.d.ts",
            ),
            // A Python file keeps its site-packages name, whatever else its path holds.
            (
                "/v/lib/python3.11/site-packages/node_modules/x.py",
                "site-packages://node_modules/x.py",
            ),
            ("/opt/other/x.h", "file:///opt/other/x.h"),
        ];
        for (path, want) in cases {
            assert_eq!(name(Path::new(path)), want, "{path}");
        }
    }

    #[test]
    fn a_go_toolchain_is_found_wherever_it_is_installed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site-packages/go");
        std::fs::create_dir_all(root.join("src/runtime")).unwrap();
        std::fs::create_dir_all(root.join("src/fmt")).unwrap();
        std::fs::write(root.join("VERSION"), "go1.27.3\n").unwrap();
        let print = root.join("src/fmt/print.go");
        std::fs::write(&print, "package fmt\n").unwrap();
        assert_eq!(name(&print), "goroot://fmt/print.go");
        // Without the toolchain's marks, it is an ordinary site-packages file.
        std::fs::remove_file(root.join("VERSION")).unwrap();
        assert_eq!(name(&print), "site-packages://go/src/fmt/print.go");
    }
}
