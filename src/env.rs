//! Environment capture for bundles (docs/bundle.md#environment): the Python interpreter the server
//! is pointed at, the digest of the configuration that shapes its answers, the platform.
//!
//! Paths inside the workspace are recorded relative to it so that a copy of the workspace at
//! another path hashes the same; only an interpreter (and its venv) outside the root is
//! recorded absolute.

use crate::bundle::Python;
use crate::digest::sha256_tagged;
use crate::workspace::Workspace;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files whose content feeds `configDigest`: the index's one list.
pub use crate::workspace::index::SERVER_CONFIG as CONFIG_FILES;

/// The interpreter lanser hands the server: a venv in the root, `$VIRTUAL_ENV`, else `python3`
/// (then `python`) on PATH.
pub fn find_python(ws: &Workspace) -> Option<PathBuf> {
    for venv in [".venv", "venv"] {
        let exe = ws.root.join(venv).join("bin/python");
        if exe.is_file() {
            return Some(exe);
        }
    }
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        let exe = PathBuf::from(v).join("bin/python");
        if exe.is_file() {
            return Some(exe);
        }
    }
    crate::servers::which("python3").or_else(|| crate::servers::which("python"))
}

/// Interpreter facts: `exe` (the interpreter's own `sys.executable`, so that a launcher or a
/// pyenv shim found first on PATH records the interpreter it runs, not itself; relative inside
/// the root), `version` (x.y.z), `venv` (the environment's prefix when it is a virtual
/// environment).
pub fn probe_python(ws: &Workspace, exe: Option<&Path>) -> Python {
    let Some(exe) = exe else {
        return Python {
            exe: None,
            version: None,
            venv: None,
        };
    };
    let shown = |p: &Path| {
        ws.relative(p)
            .unwrap_or_else(|| p.to_string_lossy().into_owned())
    };
    let out = Command::new(exe)
        .args([
            "-c",
            "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.prefix if sys.prefix != sys.base_prefix else ''); print(sys.executable)",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut lines = text.lines();
    let version = lines.next().map(str::to_string).filter(|v| !v.is_empty());
    let venv = lines
        .next()
        .filter(|p| !p.is_empty())
        .map(|p| shown(Path::new(p)));
    let real = lines.next().filter(|p| !p.is_empty()).map(Path::new);
    Python {
        exe: Some(shown(real.unwrap_or(exe))),
        version,
        venv,
    }
}

/// Whether the settings point the server at a launcher script (`#!`: a pyenv shim, which runs a
/// few dozen processes to pick the interpreter on every call) rather than an interpreter.
pub fn launched(settings: &Value) -> bool {
    let Some(path) = settings
        .pointer("/python/pythonPath")
        .and_then(Value::as_str)
    else {
        return false;
    };
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| head == *b"#!")
}

/// Point the settings at the interpreter `python` was found to run (its `sys.executable`),
/// when the probe answered.
pub fn point_at(settings: &mut Value, ws: &Workspace, python: &Python) {
    let Some(exe) = &python.exe else { return };
    let real = ws.root.join(exe);
    if let (true, Some(p)) = (real.is_file(), settings.pointer_mut("/python/pythonPath")) {
        *p = json!(real.to_string_lossy());
    }
}

/// Settings served to the server (`workspace/configuration`, didChangeConfiguration) for the
/// workspace at `root`: the import roots of the Python projects nested in it are
/// `python.analysis.extraPaths` (a monorepo's packages resolve as each one's own session
/// would resolve them; none nested, no key).
pub fn server_settings(root: &Path, python: Option<&Path>) -> Value {
    let mut python_section = json!({
        "analysis": {
            "diagnosticMode": "openFilesOnly",
            "autoSearchPaths": true,
            "useLibraryCodeForTypes": true
        }
    });
    if let Some(p) = python {
        python_section["pythonPath"] = json!(p.to_string_lossy());
    }
    let nested = crate::workspace::pyconfig::nested_roots(root);
    if !nested.is_empty() {
        python_section["analysis"]["extraPaths"] = json!(nested);
    }
    json!({ "python": python_section, "pyright": {} })
}

/// sha256 over the settings (with the interpreter path replaced by its shown form) and the
/// digests of the configuration files present in the root.
pub fn config_digest(ws: &Workspace, settings: &Value, python: &Python) -> String {
    config_digest_with(ws, settings, python, &[])
}

/// [`config_digest`] with more files: (label, digest) pairs such as lanser.toml's.
pub fn config_digest_with(
    ws: &Workspace,
    settings: &Value,
    python: &Python,
    extra_files: &[(String, String)],
) -> String {
    let mut settings = settings.clone();
    if let Some(p) = settings.pointer_mut("/python/pythonPath") {
        *p = json!(python.exe);
    }
    let files: serde_json::Map<String, Value> = CONFIG_FILES
        .iter()
        .filter_map(|f| {
            let bytes = std::fs::read(ws.root.join(f)).ok()?;
            Some((f.to_string(), json!(sha256_tagged(&bytes))))
        })
        .chain(extra_files.iter().map(|(l, d)| (l.clone(), json!(d))))
        .collect();
    let domain = json!({"settings": settings, "files": files});
    sha256_tagged(&serde_jcs::to_vec(&domain).expect("values canonicalize"))
}

/// `<os>-<arch>`, e.g. `linux-x86_64`.
pub fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}
