//! `lanser changes [--since REV | --since-bundle B]`: what changed at the level of symbols
//! between a base and the files on disk now — definitions added, removed, moved (with the
//! relocation score as confidence) and changed (signature, body). The base is a git revision
//! (read with [`crate::git`]) or the `docVersions` a bundle recorded (their texts come
//! from the snapshot store, which keeps every recorded version). Outlines come from lanser's
//! own parse (tree-sitter), without the server, in every language with an outline; the
//! comparison itself is [`super::symdiff`].

use super::render::Page;
use super::symdiff::{self, ChangeKind, Side};
use super::Operation;
use crate::bundle::facts::{Facts, Provenance};
use crate::bundle::Bundle;
use crate::document::Document;
use crate::error::{ErrorCode, LanserError, Result};
use crate::orchestrator::{Ctx, Outcome};
use crate::python::modules;
use crate::relocate::grammars::Grammar;
use crate::relocate::{snapshot, structural};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What changed, symbol by symbol, since a git revision or a bundle
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Changes {
    /// The git revision to compare with (`HEAD`, `HEAD~3`, a branch, a commit id); the
    /// default when neither base is given is HEAD
    #[arg(long, value_name = "REV", conflicts_with = "since_bundle")]
    pub since: Option<String>,
    /// A bundle file (`--json` output): compare with the file versions its `meta.docVersions`
    /// recorded (lanser keeps the text of every version a bundle records)
    #[arg(long, value_name = "BUNDLE")]
    pub since_bundle: Option<String>,
}

/// What the files were compared with.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    /// `git` or `bundle`.
    pub kind: BaseKind,
    /// The revision as given (`git`).
    pub rev: Option<String>,
    /// The commit it names (`git`).
    pub commit: Option<String>,
    /// The bundle's `bundleId` (`bundle`).
    pub bundle_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BaseKind {
    Git,
    Bundle,
}

/// A file whose text differs from the base.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Workspace-relative.
    pub path: String,
    /// `added`, `removed` or `modified`.
    pub status: FileStatus,
    /// The base's version of it (none when added).
    pub old_doc_version: Option<String>,
    /// Its version now (none when removed).
    pub doc_version: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FileStatus {
    Added,
    Removed,
    Modified,
}

/// A file version the base names whose text lanser does not have.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Missing {
    pub path: String,
    pub doc_version: String,
}

/// `changes`' facts.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesFacts {
    pub base: Base,
    /// The files with an outline whose text differs from the base, by path.
    pub files: Vec<FileChange>,
    /// The definitions added, removed, moved or changed, by (path, qualname, kind).
    pub changes: Vec<symdiff::SymbolChange>,
    /// Versions the bundle recorded that are not in the snapshot store (their files are not
    /// compared; the answer is then incomplete).
    pub missing: Vec<Missing>,
    pub provenance: Provenance,
    /// Files that differ from the git base but have no outline, so that no symbol of theirs
    /// is compared (`meta.complete` is false when one is code, as `.rb` or a `Makefile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<Vec<crate::bundle::facts::Unchecked>>,
}

impl Facts for ChangesFacts {
    const PAGED: Option<&'static str> = Some("changes");
}

impl Operation for Changes {
    const NAME: &'static str = "changes";
    type Facts = ChangesFacts;
    fn uses_server(&self) -> bool {
        false
    }
    /// It reads git, or a bundle file and the snapshot store: not the workspace alone.
    fn memoizable(&self) -> bool {
        false
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let (base, pairs, missing, unchecked) = match &self.since_bundle {
            Some(path) => since_bundle(o, path)?,
            None => since_rev(o, self.since.as_deref().unwrap_or("HEAD"))?,
        };
        let (files, changes) = compare(o, pairs)?;
        let code = |f: &String| {
            crate::servers::unserved::CODE_TYPES
                .contains(&crate::servers::unserved::file_type(f).as_str())
        };
        let complete = missing.is_empty() && !unchecked.iter().any(code);
        let facts = ChangesFacts {
            base,
            files,
            changes,
            missing,
            provenance: Provenance::Parser,
            unchecked: crate::bundle::facts::Unchecked::list(&unchecked),
        };
        Ok(Outcome::read(facts, None, complete))
    }
    /// One line per change: what happened, the symbol, where.
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        let since = match facts.base.kind {
            BaseKind::Git => format!(
                "{} ({})",
                facts.base.rev.as_deref().unwrap_or("HEAD"),
                facts
                    .base
                    .commit
                    .as_deref()
                    .map_or("", |c| &c[..c.len().min(12)])
            ),
            BaseKind::Bundle => format!(
                "bundle {}",
                facts.base.bundle_id.as_deref().unwrap_or_default()
            ),
        };
        page.line(format_args!(
            "{} change(s) in {} file(s) since {since}",
            facts.changes.len(),
            facts.files.len()
        ));
        for c in &facts.changes {
            page.line(format_args!("{}", symdiff::describe(c)));
        }
        for m in &facts.missing {
            page.line(format_args!(
                "not compared: {} ({} is not in the snapshot store)",
                m.path, m.doc_version
            ));
        }
    }
}

/// One file's two texts: the base's (none when added) and the disk's (none when removed).
pub struct Pair {
    pub rel: String,
    pub old: Option<String>,
    pub new: Option<Document>,
}

/// The base, the pairs to compare, the versions missing, the changed files with no outline.
type Based = (Base, Vec<Pair>, Vec<Missing>, Vec<String>);

fn outlined(rel: &str) -> bool {
    Grammar::for_path(rel).is_some()
}

/// The file on disk now, when the workspace reads it.
fn current(o: &Ctx<'_>, rel: &str) -> Result<Option<Document>> {
    match o.ws().snapshot_file(rel) {
        Some(abs) => Document::load(abs, rel.to_string()).map(Some),
        None => Ok(None),
    }
}

fn since_rev(o: &Ctx<'_>, rev: &str) -> Result<Based> {
    let root = o.ws().root.clone();
    let inputs = &o.opts().inputs;
    let list = inputs
        .read_to_string("git:changed", rev, || {
            crate::git::changed_since(&root, rev)
        })
        .map_err(|e| {
            LanserError::usage(format!("changes --since {rev}: cannot compare the workspace with it (a git revision of the repository holding the workspace)")).with_source(e)
        })?;
    let mut lines = list.lines();
    let commit = lines.next().unwrap_or_default().to_string();
    let mut pairs = Vec::new();
    let (lines, unchecked): (Vec<&str>, Vec<&str>) = lines.partition(|l| outlined(l));
    let unchecked = unchecked
        .into_iter()
        .filter(|rel| crate::workspace::walk::admits(&root, &root.join(rel)))
        .map(str::to_string)
        .collect();
    for rel in lines {
        let old = inputs
            .read_to_string(&format!("git:{rev}"), rel, || {
                crate::git::text_at(&root, rev, rel)
            })
            .ok();
        let new = current(o, rel)?;
        // A file on disk the workspace does not read (a skipped directory, outside the
        // snapshot) is not compared: it was not removed.
        if new.is_none() && root.join(rel).exists() {
            continue;
        }
        if old.is_some() || new.is_some() {
            pairs.push(Pair {
                rel: rel.to_string(),
                old,
                new,
            });
        }
    }
    let base = Base {
        kind: BaseKind::Git,
        rev: Some(rev.to_string()),
        commit: Some(commit),
        bundle_id: None,
    };
    Ok((base, pairs, vec![], unchecked))
}

fn since_bundle(o: &Ctx<'_>, path: &str) -> Result<Based> {
    let abs = o.opts().cwd.join(path);
    let text = o
        .opts()
        .inputs
        .read_to_string("--since-bundle", path, || std::fs::read(&abs))
        .map_err(|e| LanserError::not_found(format!("cannot read bundle {path}")).with_source(e))?;
    let bundle: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .map_err(|e| {
            LanserError::usage(format!("bundle {path}: not a bundle (one line of JSON)"))
                .with_source(e)
        })?;
    let Some(versions) = bundle["meta"]["docVersions"].as_object() else {
        return Err(LanserError::usage(format!(
            "bundle {path} records no meta.docVersions (bundles before lanser named the file versions they read cannot be compared with)"
        )));
    };
    let store = snapshot::Store::through(&o.opts().inputs);
    let (mut pairs, mut missing) = (Vec::new(), Vec::new());
    let recorded: BTreeMap<&String, &str> = versions
        .iter()
        .filter_map(|(p, v)| Some((p, v.as_str()?)))
        .collect();
    for (rel, version) in recorded.into_iter().filter(|(p, _)| outlined(p)) {
        let new = current(o, rel)?;
        if new.as_ref().is_some_and(|d| d.doc_version == version) {
            continue;
        }
        match store.get(version) {
            Some(old) => pairs.push(Pair {
                rel: rel.clone(),
                old: Some(old),
                new,
            }),
            None => missing.push(Missing {
                path: rel.clone(),
                doc_version: version.to_string(),
            }),
        }
    }
    if !missing.is_empty() && pairs.is_empty() {
        let list: Vec<String> = missing
            .iter()
            .map(|m| format!("{} {}", m.path, m.doc_version))
            .collect();
        return Err(LanserError::new(
            ErrorCode::VersionSkew,
            format!(
                "changes --since-bundle {path}: no recorded version of a changed file is in the snapshot store ({}), so nothing can be compared",
                list.join(", ")
            ),
        ));
    }
    let base = Base {
        kind: BaseKind::Bundle,
        rev: None,
        commit: None,
        bundle_id: bundle["bundleId"].as_str().map(str::to_string),
    };
    Ok((base, pairs, missing, vec![]))
}

/// Parse both sides of every pair and compare their definitions.
fn compare(o: &Ctx<'_>, pairs: Vec<Pair>) -> Result<(Vec<FileChange>, Vec<symdiff::SymbolChange>)> {
    let roots = o.ws().import_roots();
    let mut files = Vec::new();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for p in pairs {
        let abs = o.ws().root.join(&p.rel);
        let module = modules::module_of(&roots, &abs).unwrap_or_else(|| p.rel.clone());
        let old = match &p.old {
            Some(text) => {
                let doc = Document::from_text(abs.clone(), p.rel.clone(), text.clone());
                Some(structural::parse_doc(doc, module.clone())?)
            }
            None => None,
        };
        let new = match &p.new {
            Some(doc) => Some(o.parse_cache().parsed(doc, module)?),
            None => None,
        };
        let status = match (&old, &new) {
            (None, _) => FileStatus::Added,
            (_, None) => FileStatus::Removed,
            _ => FileStatus::Modified,
        };
        let old_version = old.as_ref().map(|p| p.doc.doc_version.clone());
        let new_version = new.as_ref().map(|p| p.doc.doc_version.clone());
        if old_version == new_version {
            continue;
        }
        files.push(FileChange {
            path: p.rel.clone(),
            status,
            old_doc_version: old_version,
            doc_version: new_version,
        });
        if let Some(old) = old {
            before.push(Side::Owned(old));
        }
        if let Some(new) = new {
            after.push(Side::Shared(new));
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let cx = symdiff::Cx {
        ws: o.ws(),
        cache: o.parse_cache(),
        encoding: o.encoding(),
    };
    let changes = symdiff::diff(&cx, &before, &after);
    debug_assert!(changes
        .iter()
        .all(|c| c.kind != ChangeKind::Moved || c.confidence.is_some()));
    Ok((files, changes))
}
