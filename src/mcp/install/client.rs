//! What each MCP client reads: the file that holds its servers for a scope (from the
//! environment: `HOME`, `XDG_CONFIG_HOME`, `APPDATA`, `CODEX_HOME`), its format, and the shape
//! of lanser's entry in it.

use super::{Entry, InstallError};
use crate::cli::{McpClient, McpScope};
use std::path::{Path, PathBuf};

/// How a client's file is written.
#[derive(Debug, Clone, Copy)]
pub enum Format {
    /// A JSON object whose member `key` maps server names to entries (`jsonc`: comments and
    /// trailing commas allowed, as VS Code reads it).
    Json { key: &'static str, jsonc: bool },
    /// Codex's TOML: `[mcp_servers.NAME]` tables.
    Toml,
}

/// The file to write for one client and scope.
#[derive(Debug)]
pub struct Target {
    pub path: PathBuf,
    pub format: Format,
    pub scope: McpScope,
}

/// How the client reaches lanser.
#[derive(Debug)]
pub enum Transport {
    /// It starts `command args…` and speaks MCP on its stdin/stdout.
    Stdio { command: String, args: Vec<String> },
    /// It connects to a running `lanser mcp --http` at `url`.
    Http { url: String },
}

/// The client's name as its users know it.
pub fn label(client: McpClient) -> &'static str {
    match client {
        McpClient::ClaudeCode => "Claude Code",
        McpClient::Cursor => "Cursor",
        McpClient::Vscode => "VS Code",
        McpClient::Codex => "Codex",
        McpClient::ClaudeDesktop => "Claude Desktop",
    }
}

/// The file `client` keeps its servers in for `scope` (its default scope when none is given):
/// project files are under the workspace `ws`.
pub fn target(
    client: McpClient,
    scope: Option<McpScope>,
    ws: &Path,
) -> Result<Target, InstallError> {
    use McpClient::*;
    let default = match client {
        Codex | ClaudeDesktop => McpScope::User,
        ClaudeCode | Cursor | Vscode => McpScope::Project,
    };
    let scope = scope.unwrap_or(default);
    let mcp_servers = Format::Json {
        key: "mcpServers",
        jsonc: false,
    };
    let (path, format) = match (client, scope) {
        (ClaudeCode, McpScope::Project) => (ws.join(".mcp.json"), mcp_servers),
        (ClaudeCode, McpScope::User) => (home()?.join(".claude.json"), mcp_servers),
        (Cursor, McpScope::Project) => (ws.join(".cursor").join("mcp.json"), mcp_servers),
        (Cursor, McpScope::User) => (home()?.join(".cursor").join("mcp.json"), mcp_servers),
        (Vscode, scope) => {
            let path = match scope {
                McpScope::Project => ws.join(".vscode").join("mcp.json"),
                McpScope::User => config_dir()?.join("Code").join("User").join("mcp.json"),
            };
            let format = Format::Json {
                key: "servers",
                jsonc: true,
            };
            (path, format)
        }
        (Codex, McpScope::Project) => (ws.join(".codex").join("config.toml"), Format::Toml),
        (Codex, McpScope::User) => {
            let dir = match var("CODEX_HOME") {
                Some(dir) => dir,
                None => home()?.join(".codex"),
            };
            (dir.join("config.toml"), Format::Toml)
        }
        (ClaudeDesktop, McpScope::User) => (
            config_dir()?
                .join("Claude")
                .join("claude_desktop_config.json"),
            mcp_servers,
        ),
        (ClaudeDesktop, McpScope::Project) => {
            return Err(InstallError::Unsupported(
                "Claude Desktop has no project configuration: drop --scope project".into(),
            ))
        }
    };
    Ok(Target {
        path,
        format,
        scope,
    })
}

/// lanser's entry as `client` spells it.
pub fn entry(client: McpClient, transport: &Transport) -> Result<Entry, InstallError> {
    // Claude Code and VS Code name the transport; Cursor, Codex and Claude Desktop tell it
    // from the keys.
    let typed = matches!(client, McpClient::ClaudeCode | McpClient::Vscode);
    let mut m = Entry::new();
    match transport {
        Transport::Stdio { command, args } => {
            if typed {
                m.push(("type", "stdio".into()));
            }
            m.push(("command", command.as_str().into()));
            m.push(("args", args.clone().into()));
        }
        Transport::Http { .. } if client == McpClient::ClaudeDesktop => {
            return Err(InstallError::Unsupported(
                "Claude Desktop's claude_desktop_config.json takes only servers it starts \
                 (stdio): drop --http, or add the URL in Claude Desktop under Settings > \
                 Connectors"
                    .into(),
            ))
        }
        Transport::Http { url } => {
            if typed {
                m.push(("type", "http".into()));
            }
            m.push(("url", url.as_str().into()));
        }
    }
    Ok(m)
}

/// A non-empty environment variable, as a path.
fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `HOME` (on Windows, else `USERPROFILE`).
fn home() -> Result<PathBuf, InstallError> {
    var("HOME")
        .or_else(|| cfg!(windows).then(|| var("USERPROFILE")).flatten())
        .ok_or(InstallError::NoHome("HOME"))
}

/// Where desktop apps keep their settings: `%APPDATA%` on Windows, `~/Library/Application
/// Support` on macOS, else `$XDG_CONFIG_HOME` or `~/.config`.
fn config_dir() -> Result<PathBuf, InstallError> {
    if cfg!(windows) {
        return var("APPDATA").ok_or(InstallError::NoHome("APPDATA"));
    }
    if cfg!(target_os = "macos") {
        return Ok(home()?.join("Library").join("Application Support"));
    }
    match var("XDG_CONFIG_HOME") {
        Some(dir) => Ok(dir),
        None => Ok(home()?.join(".config")),
    }
}
