//! The Analysis Bundle envelope (docs/bundle.md): its fields, the
//! hash domain, JCS canonicalization and the `bundleId`.
//!
//! `bundleId` = sha256 over the JCS (RFC 8785) bytes of the bundle without `bundleId` and
//! without the fields named in `meta.hashing.excluded`. `--json` prints the whole bundle as JCS
//! on one line; the volatile `meta.timing` is present only when asked for (`--timing`), so two
//! runs over the same snapshot print the same bytes.

pub mod facts;
pub mod normalize;

use crate::error::{ErrorCode, LanserError};
use crate::exit::ExitStatus;
use crate::selector::PositionSpec;
use crate::text::Encoding;
use crate::workspace::Workspace;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Component, Path};

pub const BUNDLE_VERSION: &str = "1.2";
pub const HASH_ALGO: &str = "sha256-jcs-v1";
/// Dotted paths left out of the hash domain.
pub const EXCLUDED: &[&str] = &["meta.timing"];
/// A bundle's JCS up to its first member's value, while `bundleId` is empty.
const EMPTY_ID: &str = "{\"bundleId\":\"\",";
pub const SORTING_KEYS: &[&str] = &["path", "range[0]", "range[1]", "range[2]", "range[3]"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestEcho {
    pub cmd: String,
    pub selector: Option<PositionSpec>,
    pub args: Map<String, Value>,
    #[serde(rename = "indexIo")]
    pub index_io: Encoding,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Resolved {
    pub path: String,
    pub range: [u32; 4],
    #[serde(rename = "docVersion")]
    pub doc_version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Resolution {
    /// The selector as given (canonical string form).
    pub original: String,
    pub resolved: Resolved,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    pub ambiguous: bool,
    pub disambiguation: Vec<Value>,
    pub weights: Value,
    /// The chosen candidate's features (structural selectors, anchors, relocated cursors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Value>,
    /// The stable structural fingerprint of the resolved symbol (`py://`, `ast://`).
    #[serde(default, rename = "symbolId", skip_serializing_if = "Option::is_none")]
    pub symbol_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Edits {
    #[serde(rename = "workspaceEdit")]
    pub workspace_edit: Option<Value>,
    pub diff: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerId {
    pub name: String,
    pub version: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Python {
    pub exe: Option<String>,
    pub version: Option<String>,
    pub venv: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Environment {
    pub server: Option<ServerId>,
    #[serde(rename = "positionEncoding")]
    pub position_encoding: Encoding,
    pub python: Python,
    #[serde(rename = "configDigest")]
    pub config_digest: String,
    pub platform: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorObj {
    #[serde(with = "crate::error::symbol")]
    #[schemars(with = "String")]
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Why: the error's causes (its source chain), outermost first, one line each; absent
    /// when there are none. `message` says what was wrong and never repeats them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
}

impl ErrorObj {
    /// `E/CODE: message: cause: cause` — the error and its causes on one line.
    pub fn one_line(&self) -> String {
        crate::error::folded(self.code, &self.message, &self.causes)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hashing {
    pub algo: String,
    pub excluded: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Meta {
    pub exit_code: u8,
    pub sorting_keys: Vec<String>,
    pub hashing: Hashing,
    /// False when the server had not finished loading the project, so cross-file answers may
    /// be partial.
    pub complete: bool,
    pub truncated: bool,
    pub cursor: Option<String>,
    /// `"unknown"` when the server declares no "loaded" signal and gave no sign of having
    /// loaded what was asked within the bound (docs/languages.md#readiness): lanser could not
    /// know it was ready, so an empty answer may mean "not loaded yet" rather than "nothing
    /// there" (`complete` is then false). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<String>,
    /// Why `complete` is false when the server said its project import failed or ended with
    /// problems (jdtls's `language/status`, e.g. a Maven build whose plugins are not in the
    /// local repository): its answers on the project's files may then be missing or partial.
    /// Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Value>,
    /// The `docVersion` of every workspace file the bundle names, keyed by its
    /// workspace-relative path: the text the facts describe — the bytes on disk when the
    /// answer was assembled, or, for a file an edit was computed against, that edit's
    /// `docVersion` (so an `--apply` bundle names the text before the write). A daemon brings
    /// its server in line with disk before answering, so these are also the versions its
    /// server saw. Speculative layers (`check --patch`, previews) are described by `edits`.
    #[serde(default, rename = "docVersions")]
    pub doc_versions: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bundle {
    pub version: String,
    #[serde(rename = "bundleId")]
    #[schemars(pattern(r"^sha256:[0-9a-f]{64}$"))]
    pub bundle_id: String,
    pub status: Status,
    pub request: RequestEcho,
    pub resolution: Option<Resolution>,
    pub facts: Value,
    pub edits: Edits,
    #[serde(rename = "processReward")]
    #[schemars(with = "Option<crate::reward::AnyReward>")]
    pub process_reward: Option<Value>,
    pub environment: Environment,
    /// Which features the server advertised, by name (`{}` when no server was asked).
    #[schemars(with = "std::collections::BTreeMap<String, bool>")]
    pub capabilities: Value,
    pub error: Option<ErrorObj>,
    pub meta: Meta,
    /// The hash domain's JCS as of [`Bundle::seal`], when nothing excluded from it was
    /// present: the output is then that text with `bundleId` put first (its place in JCS
    /// order), so a bundle is canonicalized once, not twice.
    #[serde(skip)]
    pub sealed: Option<String>,
}

impl Meta {
    pub fn new(complete: bool) -> Meta {
        Meta {
            exit_code: 0,
            sorting_keys: SORTING_KEYS.iter().map(|s| s.to_string()).collect(),
            hashing: Hashing {
                algo: HASH_ALGO.into(),
                excluded: EXCLUDED.iter().map(|s| s.to_string()).collect(),
            },
            complete,
            truncated: false,
            cursor: None,
            readiness: None,
            incomplete: None,
            timing: None,
            doc_versions: BTreeMap::new(),
        }
    }
}

impl Bundle {
    /// Turn this bundle into an error bundle for `err`.
    pub fn set_error(&mut self, err: &LanserError) {
        self.status = Status::Error;
        self.error = Some(ErrorObj {
            code: err.code,
            message: err.message.clone(),
            retryable: err.code.retryable(),
            details: err.details.clone(),
            causes: err.causes(),
        });
        self.meta.exit_code = err.code.exit_code();
    }

    /// The exit status this bundle stands for.
    pub fn exit_status(&self) -> ExitStatus {
        match &self.error {
            Some(e) => ExitStatus::Failed(e.code),
            None => ExitStatus::Success,
        }
    }

    /// Compute and store `bundleId` over the hash domain.
    pub fn seal(&mut self) {
        self.sealed = None;
        let id = std::mem::take(&mut self.bundle_id);
        // `bundleId` sorts before every other member, so with it empty (and no excluded
        // member present) the JCS is `{"bundleId":"",` followed by the hash domain's.
        let domain = match self.meta.timing {
            None => serde_jcs::to_string(self)
                .expect("bundles serialize")
                .strip_prefix(EMPTY_ID)
                .map(|rest| format!("{{{rest}")),
            Some(_) => None,
        };
        self.bundle_id = id;
        match domain {
            Some(domain) => {
                self.bundle_id = crate::digest::sha256_tagged(domain.as_bytes());
                debug_assert_eq!(self.bundle_id, bundle_id(self), "one hash domain");
                self.sealed = Some(domain);
            }
            None => self.bundle_id = bundle_id(self),
        }
    }

    /// Fill `meta.docVersions` for the workspace files the bundle names: a file an edit was
    /// computed against keeps that edit's `docVersion` (so an `--apply` bundle still names the
    /// text its facts describe), the resolved file the version it was resolved on; any other
    /// is hashed from disk, when it is a file of the
    /// snapshot the server reads ([`Workspace::snapshot_file`]: nothing outside the root,
    /// behind a symlink, or in a skipped directory).
    pub fn record_doc_versions(&mut self, ws: &Workspace) {
        let mut known: BTreeMap<String, String> = BTreeMap::new();
        if let Some(files) = self
            .edits
            .workspace_edit
            .as_ref()
            .and_then(|we| we.get("files"))
            .and_then(Value::as_array)
        {
            for f in files {
                if let (Some(p), Some(v)) = (f["path"].as_str(), f["docVersion"].as_str()) {
                    known.insert(p.to_string(), v.to_string());
                }
            }
        }
        // The resolved file's version is the text the selector was resolved on: not read
        // again, so a file replaced meanwhile cannot pair this answer with another version.
        let resolved = self
            .resolution
            .as_ref()
            .map(|r| (r.resolved.path.clone(), r.resolved.doc_version.clone()))
            .filter(|(_, v)| v.starts_with("sha256:"));
        let mut paths = std::collections::BTreeSet::new();
        if let Some(r) = &self.resolution {
            paths.insert(r.resolved.path.clone());
        }
        named_paths(&self.facts, &mut paths);
        if let Some(we) = &self.edits.workspace_edit {
            named_paths(we, &mut paths);
        }
        self.meta.doc_versions = paths
            .into_iter()
            .filter(|p| is_workspace_relative(p))
            .filter_map(|p| {
                if let Some(v) = known.remove(&p) {
                    return Some((p, v));
                }
                let file = ws.snapshot_file(&p)?;
                if let Some(v) = resolved.as_ref().filter(|(rp, _)| *rp == p) {
                    return Some((p, v.1.clone()));
                }
                let bytes = std::fs::read(file).ok()?;
                Some((p, crate::digest::sha256_tagged(&bytes)))
            })
            .collect();
    }

    /// One-line JCS.
    pub fn to_jcs(&self) -> String {
        if let (Some(domain), None) = (&self.sealed, &self.meta.timing) {
            let id = serde_json::to_string(&self.bundle_id).expect("strings serialize");
            let jcs = format!("{{\"bundleId\":{id},{}", &domain[1..]);
            debug_assert_eq!(
                jcs,
                serde_jcs::to_string(self).expect("bundles serialize"),
                "a bundle changed after it was sealed"
            );
            return jcs;
        }
        serde_jcs::to_string(self).expect("bundles serialize")
    }
}

/// sha256 over the JCS bytes of the hash domain.
pub fn bundle_id(bundle: &Bundle) -> String {
    let mut v = serde_json::to_value(bundle).expect("bundles serialize");
    if let Value::Object(m) = &mut v {
        m.remove("bundleId");
        for path in EXCLUDED {
            remove_dotted(m, path);
        }
    }
    let bytes = serde_jcs::to_vec(&v).expect("values canonicalize");
    crate::digest::sha256_tagged(&bytes)
}

/// Every string under a `"path"` key.
fn named_paths(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, item) in m {
                match (k.as_str(), item) {
                    ("path", Value::String(p)) => {
                        out.insert(p.clone());
                    }
                    _ => named_paths(item, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| named_paths(i, out)),
        _ => {}
    }
}

/// A bundle path that names a file under the root (not `typeshed://`, `site-packages://`,
/// `file://`, absolute or escaping with `..`).
fn is_workspace_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.contains("://")
        && Path::new(p)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

fn remove_dotted(m: &mut Map<String, Value>, path: &str) {
    match path.split_once('.') {
        None => {
            m.remove(path);
        }
        Some((head, rest)) => {
            if let Some(Value::Object(inner)) = m.get_mut(head) {
                remove_dotted(inner, rest);
            }
        }
    }
}

/// A minimal ok bundle, for other modules' unit tests.
#[cfg(test)]
pub fn tests_sample() -> Bundle {
    tests::sample()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn sample() -> Bundle {
        Bundle {
            version: BUNDLE_VERSION.into(),
            bundle_id: String::new(),
            status: Status::Ok,
            request: RequestEcho {
                cmd: "def".into(),
                selector: None,
                args: Map::new(),
                index_io: Encoding::Codepoint,
            },
            resolution: None,
            facts: json!({"definitions": [], "provenance": "lsp"}),
            edits: Edits::default(),
            process_reward: None,
            environment: Environment {
                server: None,
                position_encoding: Encoding::Utf16,
                python: Python {
                    exe: None,
                    version: None,
                    venv: None,
                },
                config_digest: "sha256:0".into(),
                platform: "linux-x86_64".into(),
            },
            capabilities: json!({}),
            error: None,
            meta: Meta::new(true),
            sealed: None,
        }
    }

    #[test]
    fn timing_is_outside_the_hash_domain() {
        let mut a = sample();
        a.seal();
        let mut b = sample();
        b.meta.timing = Some(json!({"totalMs": 1234}));
        b.seal();
        assert_eq!(a.bundle_id, b.bundle_id);
        assert!(a.bundle_id.starts_with("sha256:"));
        let mut c = sample();
        c.facts = json!({"definitions": [1], "provenance": "lsp"});
        c.seal();
        assert_ne!(a.bundle_id, c.bundle_id);
    }

    #[test]
    fn jcs_sorts_keys() {
        let mut a = sample();
        a.seal();
        let s = a.to_jcs();
        assert!(s.starts_with("{\"bundleId\":"), "{s}");
        assert!(!s.contains('\n'));
        assert!(!s.contains("\"timing\":"));
    }

    /// Sealing canonicalizes once: the id and the printed bytes are those of the two-pass
    /// route (the Value with `bundleId` and the excluded members removed, then JCS), for
    /// keys JCS orders by UTF-16 (an astral-plane key, an uppercase one) and odd numbers.
    #[test]
    fn one_canonicalization_gives_the_two_pass_id_and_bytes() {
        let mut a = sample();
        a.facts = json!({"\u{1F600}": 1, "Z": [1.5e-7, -0.0, 1e21], "\u{e9}": "a\u{2028}b"});
        a.meta.doc_versions.insert("b.py".into(), "sha256:2".into());
        a.seal();
        assert!(a.sealed.is_some());
        assert_eq!(a.bundle_id, bundle_id(&a));
        assert_eq!(a.to_jcs(), serde_jcs::to_string(&a).unwrap());
        // With an excluded member present, the two-pass route is taken, same id.
        let mut b = a.clone();
        b.meta.timing = Some(json!({"totalMs": 1}));
        b.seal();
        assert!(b.sealed.is_none());
        assert_eq!(b.bundle_id, a.bundle_id);
        assert_eq!(b.to_jcs(), serde_jcs::to_string(&b).unwrap());
    }
}
