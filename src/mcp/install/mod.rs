//! `lanser mcp install --client CLIENT`: lanser's entry written into an MCP client's own
//! configuration file (or, with `--dry-run`, the change printed as a diff). The entry runs this
//! binary as `mcp --workspace DIR`, or with `--http ADDR` points at `http://ADDR/mcp`.
//!
//! Running it again changes nothing ("already up to date"). An existing lanser entry that
//! differs is replaced in lanser's own keys (`type`, `command`, `args`, `url`), keeping any
//! others (`env`, headers, timeouts) — the old keys are reported. Everything else in the file
//! keeps its bytes: JSON is edited by splicing text ([`json_file`]), Codex's TOML with
//! `toml_edit` ([`toml_file`]). A file that does not parse is refused and left as it is. The
//! file is written whole to a temporary file beside it, then renamed over it.

mod client;
mod json_file;
mod toml_file;

use crate::cli::{Global, InstallArgs, McpScope};
use crate::error::{ErrorCode, LanserError};
use crate::workspace::Workspace;
use client::{Format, Transport};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::Path;

/// The name lanser's entry has in every client's server map.
pub const NAME: &str = "lanser";

/// The keys of an entry that lanser writes; an existing entry's other keys are the user's.
pub const OWNED: [&str; 4] = ["type", "command", "args", "url"];

/// Why `lanser mcp install` stopped; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{path}: {what}; lanser left it as it is")]
    Malformed { path: String, what: String },
    #[error("{0}")]
    Unsupported(String),
    #[error("--http {0}: not an address to reach (HOST:PORT, or :PORT for 127.0.0.1; not port 0)")]
    BadAddress(String),
    #[error("cannot tell where your home is: set {0}")]
    NoHome(&'static str),
    #[error("{what} {path}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<InstallError> for LanserError {
    fn from(e: InstallError) -> Self {
        let code = match e {
            InstallError::Io { .. } => ErrorCode::Internal,
            _ => ErrorCode::Usage,
        };
        LanserError::keeping_chain(code, e)
    }
}

/// Why a configuration file cannot be edited (the editors' error; the path is added here).
#[derive(Debug)]
pub struct Malformed(pub String);

impl Malformed {
    pub fn new(what: impl Into<String>) -> Malformed {
        Malformed(what.into())
    }
}

/// What an edit did to lanser's entry.
#[derive(Debug)]
pub enum Change {
    Added,
    /// Replaced; `was` is the old entry, as JSON.
    Replaced {
        was: String,
    },
    Same,
}

/// A file's new text and what changed in it.
#[derive(Debug)]
pub struct Edited {
    pub text: String,
    pub change: Change,
}

/// lanser's entry: its keys (some of [`OWNED`]) and values (strings or lists of strings), in
/// the order they are written.
pub type Entry = Vec<(&'static str, Value)>;

/// Whether an existing entry `old` already holds `entry`: the same value for each of lanser's
/// own keys (its other keys are the user's).
pub fn holds(old: &Map<String, Value>, entry: &Entry) -> bool {
    OWNED
        .iter()
        .all(|k| old.get(*k) == entry.iter().find(|(e, _)| e == k).map(|(_, v)| v))
}

/// `entry` as one line of JSON, in its order.
pub fn compact(entry: &Entry) -> String {
    let items: Vec<String> = entry
        .iter()
        .map(|(k, v)| format!("\"{k}\": {}", json_file::inline(v)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// `lanser mcp install`: what it did (or would do), as text for stdout.
pub fn run(global: &Global, args: &InstallArgs) -> Result<String, LanserError> {
    let cwd = std::env::current_dir()
        .map_err(|e| LanserError::internal("cannot read the current directory").with_source(e))?;
    let ws = Workspace::discover(global.workspace.as_deref(), &cwd)?.root;
    let ws_text = utf8(&ws)?;
    let transport = match &args.http {
        Some(addr) => Transport::Http { url: url(addr)? },
        None => {
            let exe = std::env::current_exe().map_err(|e| {
                LanserError::internal("cannot tell where the lanser binary is").with_source(e)
            })?;
            Transport::Stdio {
                command: utf8(&exe)?,
                args: vec!["mcp".into(), "--workspace".into(), ws_text.clone()],
            }
        }
    };
    let target = client::target(args.client, args.scope, &ws)?;
    let entry = client::entry(args.client, &transport)?;
    let path = &target.path;
    let old = read(path)?;
    let edited = match target.format {
        Format::Json { key, jsonc } => json_file::upsert(&old, jsonc, key, &entry),
        Format::Toml => toml_file::upsert(&old, &entry),
    }
    .map_err(|Malformed(what)| InstallError::Malformed {
        path: path.display().to_string(),
        what,
    })?;
    if !args.dry_run && !matches!(edited.change, Change::Same) {
        write(path, &edited.text)?;
    }
    let scope = match target.scope {
        McpScope::Project => "project",
        McpScope::User => "user",
    };
    let head = format!("{} ({scope} scope)", client::label(args.client));
    let mut out = report(&head, path, &edited, &entry, args.dry_run);
    if !args.dry_run || !matches!(edited.change, Change::Same) {
        out.push_str(&diff_or_entry(path, &old, &edited, &entry, args.dry_run));
    }
    if let Some(addr) = &args.http {
        out.push_str(&format!(
            "The client connects to a running server: start it yourself with\n  \
             lanser mcp --workspace {} --http {addr}\n",
            shell_word(&ws_text)
        ));
    }
    Ok(out)
}

/// The first lines of the report: what happened to which file.
fn report(head: &str, path: &Path, edited: &Edited, entry: &Entry, dry_run: bool) -> String {
    let path = path.display();
    let (verb_done, verb_dry) = match edited.change {
        Change::Same => return format!("{head}: {path} is already up to date\n"),
        Change::Added => ("added lanser to", "would add lanser to"),
        Change::Replaced { .. } => (
            "replaced lanser's entry in",
            "would replace lanser's entry in",
        ),
    };
    let mut out = match dry_run {
        true => format!("{head}: {verb_dry} {path} (dry run: nothing written)\n"),
        false => format!("{head}: {verb_done} {path}\n"),
    };
    if let Change::Replaced { was } = &edited.change {
        out.push_str(&format!("  was: {was}\n  now: {}\n", compact(entry)));
    }
    out
}

/// With `--dry-run` the change as a unified diff; else the entry written.
fn diff_or_entry(path: &Path, old: &str, edited: &Edited, entry: &Entry, dry_run: bool) -> String {
    if !dry_run {
        return match edited.change {
            Change::Added => format!("  {NAME}: {}\n", compact(entry)),
            _ => String::new(),
        };
    }
    let name = path.display().to_string();
    let mut diff = similar::TextDiff::from_lines(old, &edited.text)
        .unified_diff()
        .header(&name, &name)
        .to_string();
    if !diff.ends_with('\n') {
        diff.push('\n');
    }
    diff
}

/// `http://HOST:PORT/mcp` for `--http ADDR` (`:PORT` and the unspecified addresses, which a
/// server listens on but a client cannot connect to, mean loopback).
fn url(addr: &str) -> Result<String, InstallError> {
    let bad = || InstallError::BadAddress(addr.to_string());
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().ok().filter(|p| *p != 0).ok_or_else(bad)?;
    let host = match host {
        "" | "0.0.0.0" => "127.0.0.1",
        "[::]" => "[::1]",
        h if h.contains(['/', ' ', '@']) => return Err(bad()),
        h => h,
    };
    Ok(format!("http://{host}:{port}/mcp"))
}

/// `path` as UTF-8 text (every client's file is UTF-8).
fn utf8(path: &Path) -> Result<String, InstallError> {
    path.to_str().map(str::to_string).ok_or_else(|| {
        InstallError::Unsupported(format!(
            "{} is not UTF-8: no client can name it",
            path.display()
        ))
    })
}

/// `s` quoted for a POSIX shell when it needs to be.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The file's text, empty when it does not exist.
fn read(path: &Path) -> Result<String, InstallError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| InstallError::Malformed {
            path: path.display().to_string(),
            what: "not UTF-8".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(InstallError::Io {
            what: "cannot read",
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Write `text` to `path` whole or not at all: a new file beside it, renamed over it. A
/// symbolic link is followed (the file it names is replaced, the link kept); an existing
/// file keeps its permissions; parent directories are created.
fn write(path: &Path, text: &str) -> Result<(), InstallError> {
    let io = |what: &'static str, p: &Path| {
        let path = p.display().to_string();
        move |source| InstallError::Io { what, path, source }
    };
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
    let file_name = real.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{file_name}.lanser-{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        if let Ok(meta) = std::fs::metadata(&real) {
            f.set_permissions(meta.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &real)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io("cannot write", &real))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_become_urls() {
        assert_eq!(url(":8765").unwrap(), "http://127.0.0.1:8765/mcp");
        assert_eq!(url("0.0.0.0:80").unwrap(), "http://127.0.0.1:80/mcp");
        assert_eq!(url("[::]:9").unwrap(), "http://[::1]:9/mcp");
        assert_eq!(
            url("host.docker.internal:8765").unwrap(),
            "http://host.docker.internal:8765/mcp"
        );
        for bad in ["8765", ":0", "h:x", "a/b:1"] {
            assert!(url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_entry_is_held_by_its_own_keys_only() {
        let entry: Entry = vec![("command", "new".into()), ("args", vec!["mcp"].into())];
        let old = serde_json::json!({"env": {"A": "1"}, "args": ["mcp"], "command": "new"});
        assert!(holds(old.as_object().unwrap(), &entry));
        let old = serde_json::json!({"args": ["mcp"], "command": "new", "url": "u"});
        assert!(!holds(old.as_object().unwrap(), &entry));
        assert_eq!(compact(&entry), r#"{"command": "new", "args": ["mcp"]}"#);
        let fresh = json_file::upsert("", false, "servers", &entry).unwrap();
        assert_eq!(
            fresh.text,
            "{\n  \"servers\": {\n    \"lanser\": {\n      \"command\": \"new\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}\n"
        );
    }
}
