//! The language servers lanser drives: what each is ([`defs`]), which one a file goes to
//! ([`routing`]), the Node.js the npm ones run on ([`node`]), the one installer that puts any
//! of them onto the machine through its own ecosystem's client ([`install`]), and the command
//! line that starts one ([`resolve`]). `lanser setup` and `lanser doctor` report through
//! [`setup_all`] and [`state`].

pub mod catalog;
pub mod catalog_asked;
pub mod defs;
pub mod install;
pub mod node;
pub mod resolve;
pub mod routing;
pub mod unserved;

pub use defs::{
    builtins, diagnostics_need, Origin, Provision, ServerDef, BASEDPYRIGHT_VERSION,
    BASH_LS_VERSION, CLANGD_VERSION, DEFAULT_SERVER, GOPLS_VERSION, PYREFLY_VERSION,
    PYRIGHT_VERSION, TYPESCRIPT_LS_VERSION, TYPESCRIPT_VERSION, TY_VERSION,
};
pub use install::{install_dir, installed, setup};
pub use resolve::{
    install_if_missing, package_of, resolve, split_command, which, ServerSpec, Source,
};
pub use routing::ROUTE_ORDER;

use std::collections::BTreeMap;
use std::process::Command;

/// What to run to get a server that is not on the machine, by its install route.
pub fn how_to_install(def: &ServerDef) -> Option<String> {
    Some(match def.provision {
        Provision::Go => format!(
            "run `lanser setup --server {}` (it runs `{}` into lanser's cache; needs Go on PATH), or put gopls 0.16 or later on PATH",
            def.name,
            install::go_install_line(def)
        ),
        Provision::Rustup => format!(
            "run `lanser setup --server {}` (it runs `{}`)",
            def.name,
            install::rustup_line(def)
        ),
        Provision::Npm | Provision::Pip => format!("run `lanser setup --server {}`", def.name),
        Provision::None => return None,
    })
}

/// The first line `program ARGS` prints (its version), when it runs and succeeds.
pub(crate) fn version_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())?
        .trim()
        .to_string();
    out.status.success().then_some(line)
}

/// One line for `lanser doctor`: where `def` is found and its version, or how to install it.
pub fn state(def: &ServerDef) -> String {
    let dir = install_dir(def);
    let managed = matches!(
        def.provision,
        Provision::Npm | Provision::Pip | Provision::Go
    ) && installed(def, &dir);
    if managed {
        let version = match def.provision {
            Provision::Npm => package_of(&install::entry(def, &dir)).map(|p| p.1),
            Provision::Pip => install::pip_version(&dir, &def.package),
            _ => def.version.clone(),
        };
        return format!(
            "{} installed ({})",
            version.as_deref().unwrap_or("?"),
            dir.display()
        );
    }
    let how = || how_to_install(def).unwrap_or_else(|| format!("{} must be on PATH", def.command));
    if matches!(def.provision, Provision::Npm | Provision::Pip) {
        return format!("not installed: {}", how());
    }
    let Some(path) = which(&def.command) else {
        return format!("not found: {}", how());
    };
    let args: &[&str] = match def.provision {
        Provision::Go => &["version"],
        _ => &["--version"],
    };
    match version_line(&path.to_string_lossy(), args) {
        Some(v) => format!("{v} on PATH ({})", path.display()),
        None if def.provision == Provision::Rustup => format!(
            "rustup's proxy without the component ({}): {}",
            path.display(),
            how()
        ),
        None => format!("on PATH ({}), version unknown", path.display()),
    }
}

/// `lanser setup --all`: every server of `servers` with an install route, one line each; the
/// ones that failed, by name.
pub fn setup_all(servers: &BTreeMap<String, ServerDef>) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut failed = Vec::new();
    for def in servers.values() {
        if def.provision == Provision::None {
            out.push_str(&format!(
                "{}: not provisioned by lanser (provision = \"none\")\n",
                def.name
            ));
            continue;
        }
        match setup(def) {
            Ok(line) => out.push_str(&line),
            Err(e) => {
                out.push_str(&format!("{}: {}\n", def.name, e.message));
                failed.push(def.name.clone());
            }
        }
    }
    (out, failed)
}
