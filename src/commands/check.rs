//! `lanser check --patch FILE.diff`: what the server would say if an agent's patch were
//! applied — the patch is applied to the server's in-memory documents only, diagnostics are
//! collected for the patched files and their importers, the originals restored. Disk is
//! never written. The delta per file matches diagnostics by severity, code and message.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{CheckFacts, Provenance};
use crate::bundle::Bundle;
use crate::edits::patch;
use crate::error::{LanserError, Result};
use crate::measure::scope::Scope;
use crate::measure::speculate;
use crate::orchestrator::{Ctx, Outcome};
use crate::reward::Measured;
use crate::selector::resolve::Document;
use std::io::Read;

/// Diagnostics a unified diff would add or remove, measured in memory (disk untouched)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Check {
    /// The patch file (`-` for stdin)
    #[arg(long, value_name = "FILE")]
    pub patch: String,
}

impl Operation for Check {
    /// A patch's files are sorted by `measure` (an unserved one is listed as unchecked).
    fn refuses_unserved(&self) -> bool {
        false
    }
    /// The first file its patch changes (read only to route: from the trace's record or the
    /// disk, never stdin).
    fn files(&self, opts: &crate::orchestrator::Options) -> Vec<String> {
        if self.patch == "-" {
            return Vec::new();
        }
        let text = opts
            .inputs
            .peek("--patch", &self.patch)
            .or_else(|| std::fs::read_to_string(opts.cwd.join(&self.patch)).ok());
        let files = text.and_then(|t| crate::edits::patch::parse(&t).ok());
        files
            .and_then(|f| f.into_iter().next())
            .map(|f| vec![f.path])
            .unwrap_or_default()
    }
    fn reads_stdin(&self) -> bool {
        self.patch == "-"
    }
    fn reads_file_set(&self) -> bool {
        true
    }
    const NAME: &'static str = "check";
    type Facts = CheckFacts;
    fn changes_server_view(&self) -> bool {
        true
    }
    /// It reads its patch file when it runs.
    fn memoizable(&self) -> bool {
        false
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.patch).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::render::check(page, facts);
    }
}

/// The patch text: from the file (or stdin), or at replay from the trace.
pub(crate) fn read_patch(o: &Ctx<'_>, path: &str) -> Result<String> {
    read_input(o, "patch", path)
}

/// The text file of flag `--{what}` (`-` for stdin), read live or, at replay, from the trace.
pub(crate) fn read_input(o: &Ctx<'_>, what: &str, path: &str) -> Result<String> {
    let abs = o.opts().cwd.join(path);
    let flag = format!("--{what}");
    let text = o.opts().inputs.read_to_string(&flag, path, || {
        if path == "-" {
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes).map(|_| bytes)
        } else {
            std::fs::read(&abs)
        }
    });
    text.map_err(|e| {
        match path {
            "-" => LanserError::usage(format!("cannot read the {what} from stdin")),
            _ => LanserError::not_found(format!("cannot read the {what} {path}")),
        }
        .with_source(e)
    })
}

pub async fn run(o: &mut Ctx<'_>, patch_path: &str) -> Result<Outcome<CheckFacts>> {
    let text = read_patch(o, patch_path)?;
    let files = patch::parse(&text)?;
    refuse_unserved(o, files.iter().map(|f| f.path.as_str()))?;
    let mut changes = Vec::new();
    for fp in &files {
        let (abs, rel) = o.ws().resolve_user_path(&fp.path, &o.opts().cwd)?;
        let doc = Document::load(abs, rel)?;
        let new = patch::apply(&doc.rel, &doc.text, fp)?;
        changes.push((doc, new));
    }
    let m = measure(o, &changes, speculate::Leave::Original).await?;
    let (before, after) = (
        speculate::count(&m.spec.before),
        speculate::count(&m.spec.after),
    );
    let measured = Measured {
        d_prev: Some(before),
        d_now: Some(after),
        safety: 1,
        v2: m.v2.unwrap_or_default(),
    };
    Ok(Outcome {
        facts: CheckFacts {
            patched: changes.iter().map(|(d, _)| d.rel.clone()).collect(),
            files: speculate::delta(&m.spec),
            before,
            after,
            checked: m.spec.checked.clone(),
            provenance: Provenance::Lsp,
            unchecked: crate::bundle::facts::Unchecked::list(&m.unserved),
        },
        resolution: None,
        complete: m.complete && m.unserved.is_empty(),
        edits: None,
        reward: Some(measured),
    })
}

/// A patch whose every file no server serves is refused (`E/UNSUPPORTED`), naming the first:
/// nothing could measure it. One that changes some served file is measured on those, the
/// others listed as unchecked.
pub(crate) fn refuse_unserved<'a>(
    o: &Ctx<'_>,
    paths: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    let forced = match super::route::forced_def(o) {
        Some(forced) => forced,
        None => return Ok(()),
    };
    let mut first = None;
    for p in paths {
        // A path that does not resolve is the command's own error to report.
        let Ok((abs, rel)) = o.ws().resolve_user_path(p, &o.opts().cwd) else {
            return Ok(());
        };
        if crate::servers::unserved::served(o.config().routes(), forced, &rel, &abs) {
            return Ok(());
        }
        first.get_or_insert(rel);
    }
    match first {
        Some(rel) => Err(crate::servers::unserved::refusal(
            o.config().routes(),
            forced,
            &rel,
        )),
        None => Ok(()),
    }
}

/// What [`measure`] found: the speculation over every changed file's server, whether each
/// had loaded its project, pr-v2's terms (with `--reward pr-v2`), the changed files no
/// server serves (not measured), and what the server is left showing.
pub struct Measurement {
    pub spec: speculate::Speculation,
    pub complete: bool,
    pub v2: Option<crate::reward::v2::Measured>,
    pub unserved: Vec<String>,
    pub left: speculate::Leave,
}

/// The speculative diagnostics of `changes` (a document and its new text), each file on its
/// own server (a change over TypeScript and Python files is measured by both; the own
/// server's first). `check --patch`, `apply --patch` and `edit` measure through this. The
/// changed texts stay shown (`leave`) only when one speculation on the own server, with no
/// pr-v2 terms (which ask on the original texts), measured them all; `left` says which.
pub async fn measure(
    o: &mut Ctx<'_>,
    changes: &[(Document, String)],
    leave: speculate::Leave,
) -> Result<Measurement> {
    let forced = super::route::forced_def(o);
    let (rels, unserved): (Vec<String>, Vec<String>) =
        changes.iter().map(|(d, _)| d.rel.clone()).partition(|rel| {
            forced.is_none_or(|f| {
                crate::servers::unserved::served(
                    o.config().routes(),
                    f,
                    rel,
                    &o.ws().root.join(rel),
                )
            })
        });
    if rels.is_empty() {
        let spec = speculate::Speculation::default();
        return Ok(Measurement {
            spec,
            complete: true,
            v2: None,
            unserved,
            left: speculate::Leave::Original,
        });
    }
    let (groups, unchecked) = super::diag::by_server(o, rels, true);
    if let Some(rel) = unchecked.first() {
        let name = o.config().taker(rel).unwrap_or_default().to_string();
        return Err(super::route::one_server_only(o, &name)
            .unwrap_or_else(|| LanserError::internal(format!("{rel}: no server to measure it"))));
    }
    let left = match groups.len() == 1 && groups.contains_key(&None) && !o.opts().reward.is_v2() {
        true => leave,
        false => speculate::Leave::Original,
    };
    let (mut spec, mut complete, mut v2) = (None::<speculate::Speculation>, true, None);
    for (server, group) in groups {
        let part: Vec<(Document, String)> = changes
            .iter()
            .filter(|(d, _)| group.contains(&d.rel))
            .cloned()
            .collect();
        let mut target = match server {
            None => o.reborrow(),
            Some(name) => o.route(&name)?,
        };
        let target = &mut target;
        // A server that only publishes loads its project on the first opened document (as
        // in `diag`): open them before waiting for the load.
        let session = target.ensure_session().await?;
        if !session.pulls() {
            for (doc, _) in &part {
                session.sync_document(&crate::workspace::path_to_uri(&doc.abs), doc);
            }
        }
        complete &= target.wait_ready().await?;
        // pr-v3's selected tests run while the server re-checks (their overlay is apart).
        let pending = match (target.opts().tests, v2.is_none()) {
            (Some(budget), true) if target.opts().reward.is_v3() => {
                Some(crate::measure::tests_term::start_v3(&mut target.cx(), &part, budget).await?)
            }
            _ => None,
        };
        let one = speculate::speculate(&mut target.cx(), &part, Scope::Reach, left).await?;
        // pr-v2's terms are read on one server's view: the first group's.
        if v2.is_none() && target.opts().reward.is_v2() {
            v2 = Some(
                crate::measure::structural::measure_v2(&mut target.cx(), &one, &part, pending)
                    .await?,
            );
        }
        spec = Some(match spec {
            None => one,
            Some(all) => speculate::merge(all, one),
        });
    }
    let spec = spec.ok_or_else(|| LanserError::usage("the patch changes no file"))?;
    Ok(Measurement {
        spec,
        complete,
        v2,
        unserved,
        left,
    })
}
