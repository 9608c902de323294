//! Which server a file goes to when `--server` does not say: the default when it handles the
//! file's type, else one configured for it in a lanser.toml, else the first built-in of
//! [`ROUTE_ORDER`] that does ([`crate::config::Config::route`] asks here).

use super::defs::{Origin, ServerDef};
use std::collections::BTreeMap;

/// Which built-in server a file type goes to when the default server does not handle it,
/// in this order.
pub const ROUTE_ORDER: &[&str] = &[
    "typescript-language-server",
    "clangd",
    "gopls",
    "rust-analyzer",
    "bash-language-server",
    "vscode-json-language-server",
    "vscode-css-language-server",
    "vscode-html-language-server",
    "yaml-language-server",
    "dockerfile-language-server-nodejs",
    "intelephense",
    "svelte-language-server",
    "sql-language-server",
    "cmake-language-server",
    "fortls",
    "vue-typescript-plugin",
    "jdtls",
    "vim-language-server",
    "graphql-language-service-cli",
    "prisma-language-server",
    "astro-language-server",
    "tombi",
    "just-lsp",
    "tsp-server",
    "mdx-language-server",
    "buf",
    "badness",
    "arity",
    "fatou",
    "cucumber-language-server",
    "herb-language-server",
];

/// The server for a file at `path` among `servers` (by name), `default` being the default's
/// name: the default when it handles the file's type; else a server configured in a
/// lanser.toml that does (by name), else the first built-in of [`ROUTE_ORDER`] that does;
/// else the default.
pub fn route<'a>(
    servers: &'a BTreeMap<String, ServerDef>,
    default: &'a str,
    path: &str,
) -> &'a str {
    if servers.get(default).is_none_or(|d| d.handles(path)) {
        return default;
    }
    let configured = servers
        .values()
        .find(|d| d.origin != Origin::Builtin && d.handles(path));
    let builtin = || {
        ROUTE_ORDER
            .iter()
            .filter_map(|n| servers.get(*n))
            .find(|d| d.handles(path))
    };
    configured.or_else(builtin).map_or(default, |d| &d.name)
}

/// The server [`route`] picks for `path` when that server takes the file's type (`None`: no
/// server takes it).
pub fn taker<'a>(
    servers: &'a BTreeMap<String, ServerDef>,
    default: &'a str,
    path: &str,
) -> Option<&'a str> {
    let name = route(servers, default, path);
    servers
        .get(name)
        .is_some_and(|d| d.handles(path))
        .then_some(name)
}
