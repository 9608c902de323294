//! Servers by configuration: `lanser.toml` in the workspace root, then in the user config
//! directory (`$XDG_CONFIG_HOME/lanser/`, else `~/.config/lanser/`), layered over the built-in
//! servers ([`crate::servers::defs`]: `pyright`, the default, and the others).
//!
//! ```toml
//! server = "basedpyright"            # the server used when --server is not given
//!
//! [servers.basedpyright.settings.basedpyright.analysis]
//! typeCheckingMode = "strict"        # served to workspace/configuration by dotted section
//!
//! [servers.mypyright]
//! command = "pyright-langserver"     # a program; inside the install when provisioned
//! args = ["--stdio"]
//! file_types = ["py", "pyi"]
//! root_markers = ["pyproject.toml"]
//! version = "1.1.406"                # the pinned version (required to provision)
//! provision = "npm"                  # "npm", "pip", "go", "rustup" or "none" (PATH / path)
//! package = "pyright"                # what the client installs (default: the server name)
//! ```
//!
//! Layers merge field by field: the workspace file beats the user file, which beats the
//! built-in definition; `settings` tables merge deeply. The chosen server's settings are
//! merged over lanser's own defaults; those settings and the digest of each config file feed
//! `environment.configDigest`.

use crate::digest::sha256_tagged;
use crate::error::{ErrorCode, LanserError, Result};
pub use crate::languages::Ready;
pub use crate::servers::{Origin, Provision, ServerDef, BASEDPYRIGHT_VERSION, DEFAULT_SERVER};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The configuration file's name.
pub const FILE_NAME: &str = "lanser.toml";

/// Failures reading a config file; they become usage errors (exit 2). Each is one line:
/// control characters from the file (a newline in a quoted key, say) are shown escaped.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}", one_line(path))]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {}", one_line(path), one_line(message))]
    Parse { path: String, message: String },
    #[error("unknown server {name:?} (configured: {})", one_line(known))]
    UnknownServer { name: String, known: String },
    #[error("server {}: {}", one_line(name), one_line(message))]
    Invalid { name: String, message: String },
    #[error("{}", one_line(.0))]
    Untrusted(String),
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`), so that it prints on one line.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

impl From<ConfigError> for LanserError {
    fn from(e: ConfigError) -> Self {
        LanserError::keeping_chain(ErrorCode::Usage, e)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    server: Option<String>,
    /// Workspaces whose own lanser.toml may name what lanser runs (user file only).
    trusted_workspaces: Option<Vec<String>>,
    #[serde(default)]
    servers: BTreeMap<String, RawServer>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    args: Option<Vec<String>>,
    file_types: Option<Vec<String>>,
    root_markers: Option<Vec<String>>,
    settings: Option<toml::Table>,
    version: Option<String>,
    provision: Option<Provision>,
    package: Option<String>,
    with: Option<Vec<String>>,
    ready: Option<Ready>,
    index_markers: Option<Vec<String>>,
    ready_log: Option<String>,
    language_id: Option<String>,
    quirks: Option<Vec<crate::languages::Quirk>>,
}

impl RawServer {
    /// The fields it sets that decide what runs ([`crate::trust::EXEC_FIELDS`]).
    fn exec_fields(&self) -> Vec<&'static str> {
        let set = [
            self.command.is_some(),
            self.args.is_some(),
            self.version.is_some(),
            self.provision.is_some(),
            self.package.is_some(),
            self.with.is_some(),
        ];
        crate::trust::EXEC_FIELDS
            .iter()
            .zip(set)
            .filter_map(|(f, s)| s.then_some(*f))
            .collect()
    }
}

/// One config file that was read.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    pub origin: Origin,
    pub path: PathBuf,
    /// `sha256:<hex>` of the bytes.
    pub digest: String,
}

/// Every layer, merged.
#[derive(Debug, Clone)]
pub struct Config {
    /// By name, sorted.
    pub servers: BTreeMap<String, ServerDef>,
    /// The `server = …` of the highest layer that sets one, else [`DEFAULT_SERVER`].
    pub default: String,
    pub files: Vec<ConfigFile>,
    /// Servers whose definition an untrusted workspace file tried to make run something,
    /// with why they are refused ([`crate::trust`]).
    pub untrusted: BTreeMap<String, String>,
    /// Whether the workspace file being layered is trusted.
    trusted: bool,
    /// The user configuration's `trusted_workspaces`.
    trusted_list: Vec<String>,
    /// Whether the workspace file sets a field that decides what runs (trusted or not): the
    /// trust verdict then shapes the answers, and a trace records it.
    workspace_exec: bool,
}

fn builtins() -> BTreeMap<String, ServerDef> {
    crate::servers::builtins()
        .into_iter()
        .map(|d| (d.name.clone(), d))
        .collect()
}

/// `$XDG_CONFIG_HOME/lanser/lanser.toml`, else `~/.config/lanser/lanser.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x).join("lanser").join(FILE_NAME));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".config")
            .join("lanser")
            .join(FILE_NAME),
    )
}

impl Config {
    /// The built-ins, then the user file, then `<root>/lanser.toml`.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let mut layers = Vec::new();
        let user = user_config_path();
        if let Some(p) = &user {
            layers.push((Origin::User, p.clone()));
        }
        layers.push((Origin::Workspace, root.join(FILE_NAME)));
        let mut config = Config::builtin();
        for (origin, path) in layers {
            if origin == Origin::Workspace {
                config.trusted = crate::trust::is_trusted(root, &config.trusted_list);
            }
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(ConfigError::Read {
                        path: path.display().to_string(),
                        source,
                    })
                }
            };
            config.add_file(origin, path, &bytes)?;
        }
        for (name, why) in config.untrusted.iter_mut() {
            *why = crate::trust::refusal(
                root,
                name,
                &why.split('/').collect::<Vec<_>>(),
                user.as_deref(),
            );
        }
        if !config.servers.contains_key(&config.default) {
            return Err(config.unknown(&config.default.clone()));
        }
        Ok(config)
    }

    /// The trust verdict on the workspace's file, where that file sets what runs (`None`
    /// where the verdict changes nothing).
    pub fn workspace_trust(&self) -> Option<bool> {
        self.workspace_exec.then_some(self.trusted)
    }

    /// The built-in servers alone, with no file read.
    pub fn builtin() -> Config {
        Config {
            servers: builtins(),
            default: DEFAULT_SERVER.into(),
            files: Vec::new(),
            untrusted: BTreeMap::new(),
            trusted: true,
            trusted_list: Vec::new(),
            workspace_exec: false,
        }
    }

    /// Layer one config file's bytes (read from `path`) over this configuration.
    pub fn add_file(
        &mut self,
        origin: Origin,
        path: PathBuf,
        bytes: &[u8],
    ) -> Result<(), ConfigError> {
        let shown = match origin {
            Origin::Workspace => FILE_NAME.to_string(),
            _ => path.display().to_string(),
        };
        let text = String::from_utf8_lossy(bytes);
        let raw: RawFile = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: shown,
            message: e.message().to_string(),
        })?;
        self.apply(origin, raw)?;
        self.files.push(ConfigFile {
            origin,
            path,
            digest: sha256_tagged(bytes),
        });
        Ok(())
    }

    /// The workspaces a configuration file trusts: only the user's may name them.
    fn trust(&mut self, origin: Origin, list: Option<Vec<String>>) -> Result<(), ConfigError> {
        match (origin, list) {
            (Origin::Workspace, Some(_)) => Err(ConfigError::Invalid {
                name: "trusted_workspaces".into(),
                message: "only the user configuration can trust workspaces".into(),
            }),
            (_, Some(list)) => {
                self.trusted_list.extend(list);
                Ok(())
            }
            (_, None) => Ok(()),
        }
    }

    fn apply(&mut self, origin: Origin, raw: RawFile) -> Result<(), ConfigError> {
        if let Some(s) = raw.server {
            self.default = s;
        }
        self.trust(origin, raw.trusted_workspaces)?;
        for (name, r) in raw.servers {
            if origin == Origin::Workspace {
                let set = r.exec_fields();
                self.workspace_exec |= !set.is_empty();
                if !self.trusted && !set.is_empty() {
                    self.untrusted.insert(name.clone(), set.join("/"));
                }
            }
            let base = self.servers.get(&name).cloned();
            let invalid = |message: &str| ConfigError::Invalid {
                name: name.clone(),
                message: message.into(),
            };
            let command = match (r.command, &base) {
                (Some(c), _) if c.trim().is_empty() => return Err(invalid("command is empty")),
                (Some(c), _) => c,
                (None, Some(b)) => b.command.clone(),
                (None, None) => return Err(invalid("a new server needs a command")),
            };
            let settings = match (&base, r.settings) {
                (Some(b), Some(t)) => deep_merge(b.settings.clone(), toml_to_json(t)),
                (Some(b), None) => b.settings.clone(),
                (None, Some(t)) => toml_to_json(t),
                (None, None) => json!({}),
            };
            let def = ServerDef {
                name: name.clone(),
                command,
                args: r
                    .args
                    .or_else(|| base.as_ref().map(|b| b.args.clone()))
                    .unwrap_or_default(),
                file_types: r
                    .file_types
                    .or_else(|| base.as_ref().map(|b| b.file_types.clone()))
                    .unwrap_or_else(|| vec!["py".into(), "pyi".into()]),
                root_markers: r
                    .root_markers
                    .or_else(|| base.as_ref().map(|b| b.root_markers.clone()))
                    .unwrap_or_default(),
                settings,
                version: r
                    .version
                    .or_else(|| base.as_ref().and_then(|b| b.version.clone())),
                provision: r
                    .provision
                    .or(base.as_ref().map(|b| b.provision))
                    .unwrap_or(Provision::None),
                package: r
                    .package
                    .or_else(|| base.as_ref().map(|b| b.package.clone()))
                    .unwrap_or_else(|| name.clone()),
                origin,
                with: r
                    .with
                    .or_else(|| base.as_ref().map(|b| b.with.clone()))
                    .unwrap_or_default(),
                ready: r
                    .ready
                    .or(base.as_ref().map(|b| b.ready))
                    .unwrap_or(Ready::Settle),
                index_markers: r
                    .index_markers
                    .or_else(|| base.as_ref().map(|b| b.index_markers.clone()))
                    .unwrap_or_default(),
                ready_log: r
                    .ready_log
                    .or_else(|| base.as_ref().and_then(|b| b.ready_log.clone())),
                language_id: r
                    .language_id
                    .or_else(|| base.as_ref().and_then(|b| b.language_id.clone())),
                quirks: r
                    .quirks
                    .map(|q| crate::languages::Quirks::of(&q))
                    .or(base.as_ref().map(|b| b.quirks))
                    .unwrap_or_default(),
                init_options: base
                    .as_ref()
                    .map_or(Value::Null, |b| b.init_options.clone()),
            };
            if def.provision.needs_version() && def.version.is_none() {
                return Err(invalid(&format!(
                    "provision = \"{}\" needs a pinned version",
                    def.provision.as_str()
                )));
            }
            self.servers.insert(name, def);
        }
        Ok(())
    }

    fn unknown(&self, name: &str) -> ConfigError {
        ConfigError::UnknownServer {
            name: name.into(),
            known: self.servers.keys().cloned().collect::<Vec<_>>().join(", "),
        }
    }

    /// The server named by `--server`, else the configured default.
    pub fn select(&self, flag: Option<&str>) -> Result<&ServerDef, ConfigError> {
        let name = flag.unwrap_or(&self.default);
        if let Some(why) = self.untrusted.get(name) {
            return Err(ConfigError::Untrusted(why.clone()));
        }
        self.servers.get(name).ok_or_else(|| self.unknown(name))
    }

    /// The server for a file at `path` when `--server` does not name one: the default when it
    /// handles the file's type; else a server configured in a lanser.toml that does (by name),
    /// else the first built-in of [`crate::servers::ROUTE_ORDER`] that does; else the default.
    pub fn route(&self, path: &str) -> &str {
        crate::servers::routing::route(&self.servers, &self.default, path)
    }

    /// Every file type a server of this configuration takes, and every type lanser outlines
    /// without one: what the workspace index tracks beyond the sources
    /// ([`crate::workspace::walk::Types`]), so traces carry those files and a warm daemon
    /// sees them change.
    pub fn file_types(&self) -> crate::workspace::walk::Types {
        let types = self
            .servers
            .values()
            .flat_map(|d| d.file_types.iter().cloned())
            .chain(
                crate::relocate::grammars::FILE_TYPES
                    .iter()
                    .map(|t| t.to_string()),
            );
        crate::workspace::walk::Types::new(types)
    }

    /// The servers and the default, as [`crate::servers::unserved`] reads them.
    pub fn routes(&self) -> crate::servers::unserved::Config<'_> {
        crate::servers::unserved::Config {
            servers: &self.servers,
            default: &self.default,
        }
    }

    /// The server [`Config::route`] picks for `path` when that server takes the file's type
    /// (`None`: no server takes it).
    pub fn taker(&self, path: &str) -> Option<&str> {
        crate::servers::routing::taker(&self.servers, &self.default, path)
    }

    /// (label, digest) of each config file read, labels free of machine paths.
    pub fn file_digests(&self) -> Vec<(String, String)> {
        self.files
            .iter()
            .map(|f| {
                let label = match f.origin {
                    Origin::Workspace => FILE_NAME.to_string(),
                    _ => format!("user:{FILE_NAME}"),
                };
                (label, f.digest.clone())
            })
            .collect()
    }
}

/// Merge `over` into `base`: objects key by key, anything else replaced.
pub fn deep_merge(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Object(mut b), Value::Object(o)) => {
            for (k, v) in o {
                let merged = match b.remove(&k) {
                    Some(old) => deep_merge(old, v),
                    None => v,
                };
                b.insert(k, merged);
            }
            Value::Object(b)
        }
        (_, over) => over,
    }
}

fn toml_to_json(t: toml::Table) -> Value {
    fn conv(v: toml::Value) -> Value {
        match v {
            toml::Value::String(s) => Value::String(s),
            toml::Value::Integer(i) => json!(i),
            toml::Value::Float(f) => json!(f),
            toml::Value::Boolean(b) => Value::Bool(b),
            toml::Value::Datetime(d) => Value::String(d.to_string()),
            toml::Value::Array(a) => Value::Array(a.into_iter().map(conv).collect()),
            toml::Value::Table(t) => Value::Object(
                t.into_iter()
                    .map(|(k, v)| (k, conv(v)))
                    .collect::<Map<_, _>>(),
            ),
        }
    }
    conv(toml::Value::Table(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_routed_by_type_default_first_then_lanser_toml_then_built_ins() {
        let mut c = Config::builtin();
        assert_eq!(c.route("api/views.py"), "pyright");
        assert_eq!(c.route("web/app.tsx"), "typescript-language-server");
        assert_eq!(c.route("src/store.h"), "clangd");
        assert_eq!(c.route("main.go"), "gopls");
        assert_eq!(c.route("src/lib.rs"), "rust-analyzer");
        assert_eq!(c.route("run.sh"), "bash-language-server");
        // No server takes it: the default.
        assert_eq!(c.route("README.md"), "pyright");
        // A configured server for a type beats the built-in; the default keeps its own types.
        let toml = b"server = \"ty\"\n[servers.deno]\ncommand = \"deno\"\nargs = [\"lsp\"]\nfile_types = [\"ts\"]\n";
        c.add_file(Origin::Workspace, PathBuf::from("/w/lanser.toml"), toml)
            .unwrap();
        assert_eq!(c.route("web/app.ts"), "deno");
        assert_eq!(c.route("web/app.js"), "typescript-language-server");
        assert_eq!(c.route("api/views.py"), "ty");
    }

    /// Found by the `config` fuzz target: a quoted key holding `\n` (and a byte that is not
    /// UTF-8) made a two-line refusal. Every refusal is one line.
    #[test]
    fn a_newline_in_a_key_or_server_name_is_refused_on_one_line() {
        let fuzzed: &[u8] = b"[\"b\xfcce\\na\"]\nv= \"p61e*6\"";
        let named: &[u8] = b"[servers.\"a\\nb\"]\ncommand = \"\"\n";
        for bytes in [fuzzed, named] {
            let mut c = Config::builtin();
            let e = c
                .add_file(Origin::Workspace, PathBuf::from("/w/lanser.toml"), bytes)
                .unwrap_err()
                .to_string();
            assert!(!e.contains('\n') && e.contains("\\n"), "{e:?}");
        }
    }

    fn load(text: &str) -> Result<Config, ConfigError> {
        // Layered as a trusted workspace's file (trust itself: tests/cli/trust.rs).
        let mut c = Config::builtin();
        c.apply(
            Origin::Workspace,
            toml::from_str(text).map_err(|e| ConfigError::Parse {
                path: FILE_NAME.into(),
                message: e.message().to_string(),
            })?,
        )?;
        Ok(c)
    }

    #[test]
    fn builtins_are_pyright_then_basedpyright() {
        let c = load("").unwrap();
        assert!(c.select(None).unwrap().is_builtin_pyright());
        let b = c.select(Some("basedpyright")).unwrap();
        assert_eq!(b.provision, Provision::Pip);
        assert_eq!(b.version.as_deref(), Some(BASEDPYRIGHT_VERSION));
        assert!(matches!(
            c.select(Some("nope")),
            Err(ConfigError::UnknownServer { .. })
        ));
    }

    #[test]
    fn layers_merge_field_by_field_and_settings_deeply() {
        let c = load(
            r#"
server = "basedpyright"
[servers.basedpyright.settings.basedpyright.analysis]
typeCheckingMode = "strict"
[servers.custom]
command = "my-ls"
args = ["--stdio"]
"#,
        )
        .unwrap();
        assert_eq!(c.default, "basedpyright");
        let b = c.select(None).unwrap();
        assert_eq!(b.command, "basedpyright-langserver");
        assert_eq!(b.origin, Origin::Workspace);
        assert_eq!(
            b.settings
                .pointer("/basedpyright/analysis/typeCheckingMode"),
            Some(&json!("strict"))
        );
        assert_eq!(
            b.settings.pointer("/basedpyright/analysis/diagnosticMode"),
            Some(&json!("openFilesOnly"))
        );
        let custom = c.select(Some("custom")).unwrap();
        assert_eq!(custom.provision, Provision::None);
        assert!(custom.handles("a/b.py") && !custom.handles("a/b.rs"));
    }

    #[test]
    fn quirks_are_the_builtins_inherited_or_named() {
        use crate::languages::Quirks;
        let c = load(
            r#"
[servers.pyright.settings.python.analysis]
typeCheckingMode = "strict"
[servers.mypyright]
command = "pyright-langserver"
ready = "project-log"
quirks = ["utf16-only"]
[servers.plain]
command = "plain-ls"
"#,
        )
        .unwrap();
        assert_eq!(c.select(None).unwrap().quirks, Quirks::PYRIGHT);
        let named = c.select(Some("mypyright")).unwrap().quirks;
        assert!(named.utf16_only && !named.pulls_undeclared);
        assert_eq!(named.encodings(), ["utf-16"]);
        // A server of its own has none unless it names them.
        assert_eq!(c.select(Some("plain")).unwrap().quirks, Quirks::NONE);
        assert_eq!(Quirks::NONE.encodings(), ["utf-8", "utf-16"]);
        let e = load("[servers.x]\ncommand = \"a\"\nquirks = [\"fast\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `fast`"), "{e}");
    }

    #[test]
    fn bad_files_are_named() {
        let e = load("[servers.x]\nargs = []\n").unwrap_err().to_string();
        assert!(e.contains("server x: a new server needs a command"), "{e}");
        let e = load("colour = 1\n").unwrap_err().to_string();
        assert!(e.starts_with("lanser.toml: unknown field"), "{e}");
        let e = load("[servers.x]\ncommand = \"a\"\nprovision = \"pip\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a pinned version"), "{e}");
    }
}
