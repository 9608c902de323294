//! `lanser diag [FILE|GLOB …]`: diagnostics per file, pulled (`textDocument/diagnostic`)
//! after the project has loaded; no target means every source file of the workspace. Each
//! file is checked by the server for its type (`commands::route`) — with `--server`, only the
//! files that server takes — and the answers are merged in location order.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{DiagCounts, DiagFacts, DiagFailure, Diagnostic, Provenance, Severity};
use crate::bundle::Bundle;
use crate::error::{ErrorCode, LanserError, Result};
use crate::orchestrator::{Ctx, Outcome};
use std::collections::{BTreeMap, BTreeSet};

/// Diagnostics for files or globs (default: every Python file of the workspace)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Diag {
    /// Files or globs (workspace-relative)
    pub targets: Vec<String>,
}

impl Operation for Diag {
    fn files(&self, _: &crate::orchestrator::Options) -> Vec<String> {
        self.targets.clone()
    }
    fn whole_workspace(&self) -> bool {
        self.targets.is_empty()
    }
    fn every_session(&self) -> bool {
        true
    }
    fn reads_file_set(&self) -> bool {
        true
    }
    const NAME: &'static str = "diag";
    type Facts = DiagFacts;
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.targets).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::render::diag(page, facts);
    }
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// The workspace-relative files the targets name, sorted and deduplicated: the sources to
/// check, and the files no server serves (a glob's matches among every file of the workspace;
/// with no target, its code files), to list as unchecked.
fn files(o: &Ctx<'_>, targets: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    let all = || o.ws().index().sources();
    let forced = super::route::forced_def(o);
    let root = o.ws().root.clone();
    let Some(forced) = forced else {
        // `--server-cmd`: the user's program, whose types lanser does not know.
        return Ok((files_named(o, targets, &[])?, Vec::new()));
    };
    if targets.is_empty() {
        let unserved = crate::servers::unserved::unserved_code(o.config().routes(), forced, &root);
        return Ok((all(), unserved));
    }
    let listing = match targets.iter().any(|t| is_glob(t)) {
        true => crate::servers::unserved::listing(&root),
        false => Vec::new(),
    };
    let patterns: Vec<glob::Pattern> = targets
        .iter()
        .filter(|t| is_glob(t))
        .filter_map(|t| glob::Pattern::new(t.trim_start_matches("./")).ok())
        .collect();
    let matched = listing
        .into_iter()
        .filter(|f| patterns.iter().any(|p| p.matches(f)));
    // Every match a server serves is checked — a Python script without an extension (its
    // `#!` line), a `.toml` for TOML's server, not only the index's sources; a file no
    // server serves is listed.
    let (mut scripts, mut unserved) = (Vec::new(), Vec::new());
    for f in matched {
        let abs = root.join(&f);
        if !crate::servers::unserved::served(o.config().routes(), forced, &f, &abs) {
            unserved.push(f);
        } else {
            scripts.push(f);
        }
    }
    let mut named = files_named(o, targets, &[unserved.clone(), scripts.clone()].concat())?;
    named.extend(scripts);
    named.sort();
    named.dedup();
    Ok((named, unserved))
}

/// The sources the targets name; a glob that matches neither a source nor one of `unserved`
/// is an error.
fn files_named(o: &Ctx<'_>, targets: &[String], unserved: &[String]) -> Result<Vec<String>> {
    let all = || o.ws().index().sources();
    if targets.is_empty() {
        return Ok(all());
    }
    let mut out = BTreeSet::new();
    let mut listing: Option<Vec<String>> = None;
    for t in targets {
        if is_glob(t) {
            let pattern = glob::Pattern::new(t.trim_start_matches("./"))
                .map_err(|e| LanserError::usage(format!("bad glob {t}")).with_source(e))?;
            let files = listing.get_or_insert_with(all);
            let matched: Vec<&String> = files.iter().filter(|f| pattern.matches(f)).collect();
            if matched.is_empty() && !unserved.iter().any(|f| pattern.matches(f)) {
                return Err(LanserError::not_found(format!(
                    "glob {t} matches no source file"
                )));
            }
            out.extend(matched.into_iter().cloned());
        } else {
            out.insert(o.ws().resolve_user_path(t, &o.opts().cwd)?.1);
        }
    }
    Ok(out.into_iter().collect())
}

/// The files each server checks (`None`: this orchestrator's own server), and those left
/// unchecked because a traced run (or its replay) has only its own server. With no target, a
/// file no server takes is left out; a named one goes to the own server.
pub(crate) fn by_server(o: &Ctx<'_>, files: Vec<String>, named: bool) -> (Groups, Vec<String>) {
    let forced = super::route::forced(o.opts());
    let one_server = o.opts().tap.is_some() || o.replays();
    let (mut out, mut unchecked) = (Groups::new(), Vec::new());
    for f in files {
        let server = o
            .config()
            .taker(&f)
            .filter(|name| !forced && *name != o.server_def().name)
            .map(str::to_string);
        match server {
            Some(_) if one_server => unchecked.push(f),
            None if !named && !o.server_def().handles(&f) => {}
            server => out.entry(server).or_default().push(f),
        }
    }
    (out, unchecked)
}

pub(crate) type Groups = BTreeMap<Option<String>, Vec<String>>;

/// Diagnostics of `files` from `o`'s server: (diagnostics, files it refused, loaded).
async fn check(
    o: &mut Ctx<'_>,
    files: &[String],
) -> Result<(Vec<Diagnostic>, Vec<DiagFailure>, bool)> {
    // A server that only publishes checks open documents, and tsserver loads its project
    // on the first one: open them before waiting for the load.
    let root = o.ws().root.clone();
    let open_to_pull = o.server_def().quirks.open_to_pull;
    let session = o.ensure_session().await?;
    if !session.pulls() || open_to_pull {
        for rel in files {
            let abs = root.join(rel);
            let doc = crate::document::Document::load(abs.clone(), rel.clone())?;
            session.sync_document(&crate::workspace::path_to_uri(&abs), &doc);
        }
    }
    let ready = o.wait_ready().await?;
    // A file the server refuses to check (its own error answer, e.g. a parser's stack
    // overflow) is named in `failed`; every other file is still reported. A crash or a
    // timeout ends the request as before.
    let (mut diagnostics, mut failed) = (Vec::new(), Vec::new());
    for rel in files {
        match crate::measure::speculate::pull(&mut o.cx(), std::slice::from_ref(rel)).await {
            Ok(map) => diagnostics.extend(map.into_values().flatten()),
            Err(e) if e.code == ErrorCode::Internal => failed.push(DiagFailure {
                path: rel.clone(),
                message: e.message,
            }),
            Err(e) => return Err(e),
        }
    }
    Ok((diagnostics, failed, ready))
}

pub async fn run(o: &mut Ctx<'_>, targets: &[String]) -> Result<Outcome<DiagFacts>> {
    let (files, unserved) = files(o, targets)?;
    let (groups, unchecked) = by_server(o, files, !targets.is_empty());
    let mut files: Vec<String> = groups.values().flatten().cloned().collect();
    files.sort();
    let (mut diagnostics, mut failed, mut ready) = (Vec::new(), Vec::new(), true);
    for rel in unchecked {
        let why = "not checked: a traced run records one server, and another takes this file";
        failed.push(DiagFailure {
            path: rel,
            message: why.into(),
        });
    }
    // The own server's files first: it then runs, and the others are routed beside it.
    for (server, group) in groups {
        let answer = match server {
            None => check(o, &group).await?,
            Some(name) => check(&mut o.route(&name)?, &group).await?,
        };
        diagnostics.extend(answer.0);
        failed.extend(answer.1);
        ready &= answer.2;
    }
    let complete = ready && failed.is_empty() && unserved.is_empty();
    crate::bundle::normalize::sort_by_location(&mut diagnostics);
    let count = |sev: Severity| diagnostics.iter().filter(|d| d.severity == sev).count();
    let counts = DiagCounts {
        error: count(Severity::Error) as u64,
        warning: count(Severity::Warning) as u64,
        information: count(Severity::Information) as u64,
        hint: count(Severity::Hint) as u64,
    };
    let problems = counts.error + counts.warning;
    let facts = DiagFacts {
        files,
        diagnostics,
        counts,
        provenance: Provenance::Lsp,
        failed: (!failed.is_empty()).then_some(failed),
        unchecked: crate::bundle::facts::Unchecked::list(&unserved),
    };
    Ok(Outcome {
        facts,
        resolution: None,
        complete,
        edits: None,
        reward: Some(crate::reward::Measured {
            d_prev: None,
            d_now: Some(problems),
            safety: 1,
            ..Default::default()
        }),
    })
}
