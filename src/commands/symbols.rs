//! `lanser symbols FILE` (the file's outline) and `lanser symbols --query Q` (workspace
//! symbols; waits for the project to load, since Pyright answers empty before that).

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, Symbol, SymbolsFacts};
use crate::bundle::Bundle;
use crate::error::{LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::lsp::typed;
use crate::orchestrator::{Ctx, Outcome};
use crate::selector::resolve::Document;
use crate::workspace::path_to_uri;
use lsp_types::request::{DocumentSymbolRequest, WorkspaceSymbolRequest};
use lsp_types::{DocumentSymbolParams, WorkspaceSymbolParams};

/// A file's outline, or workspace symbols with --query
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Symbols {
    /// The file to outline (workspace-relative or absolute)
    pub file: Option<String>,
    /// Workspace symbol search (filters the outline when FILE is given)
    #[arg(long)]
    pub query: Option<String>,
}

impl Operation for Symbols {
    fn files(&self, _: &crate::orchestrator::Options) -> Vec<String> {
        self.file.iter().cloned().collect()
    }
    const NAME: &'static str = "symbols";
    type Facts = SymbolsFacts;
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, self.file.as_deref(), self.query.as_deref()).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::render::symbols(page, &facts.symbols);
    }
}

pub async fn run(
    o: &mut Ctx<'_>,
    file: Option<&str>,
    query: Option<&str>,
) -> Result<Outcome<SymbolsFacts>> {
    match (file, query) {
        (Some(file), query) => outline(o, file, query).await,
        (None, Some(query)) => workspace(o, query).await,
        (None, None) => Err(LanserError::usage("symbols needs a FILE or --query TEXT")),
    }
}

async fn outline(
    o: &mut Ctx<'_>,
    file: &str,
    query: Option<&str>,
) -> Result<Outcome<SymbolsFacts>> {
    let (abs, rel) = o.ws().resolve_user_path(file, &o.opts().cwd)?;
    let doc = Document::load(abs, rel)?;
    let uri = path_to_uri(&doc.abs);
    o.ensure_session().await?.sync_document(&uri, &doc);
    o.wait_opened(Some(&uri)).await?;
    super::gate::require::<DocumentSymbolRequest>(o, Feature::DocumentSymbol)?;
    let session = o.ensure_session().await?;
    let answer = session
        .request::<DocumentSymbolRequest>(DocumentSymbolParams {
            text_document: typed::document(&uri)?,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .await?;
    let mut n = o.normalizer();
    n.add_document(&doc);
    let mut symbols = n.outline(&uri, &answer);
    if let Some(q) = query {
        let q = q.to_lowercase();
        symbols.retain(|s| s.name().to_lowercase().contains(&q));
    }
    Ok(Outcome::read(
        SymbolsFacts {
            path: Some(doc.rel.clone()),
            doc_version: Some(doc.doc_version.clone()),
            query: None,
            symbols,
            provenance: Provenance::Lsp,
            unchecked: None,
        },
        None,
        true,
    ))
}

/// Workspace symbols from this orchestrator's server and from every other server that takes
/// one of the workspace's sources (each asked with one of its files open: tsserver answers
/// only for a loaded project), merged in location order. With `--server`, in a traced run and
/// in its replay, this server's alone.
async fn workspace(o: &mut Ctx<'_>, query: &str) -> Result<Outcome<SymbolsFacts>> {
    let mut others = other_servers(o);
    let (mut symbols, mut complete) = ask(o, query).await?;
    // A traced run (and its replay) has one server: the others' symbols are missing.
    if o.opts().tap.is_some() || o.replays() {
        complete &= others.is_empty();
        others.clear();
    }
    for (name, sample) in others {
        let mut other = o.route(&name)?;
        let (abs, rel) = other.ws().resolve_user_path(&sample, &other.opts().cwd)?;
        let doc = Document::load(abs, rel)?;
        let uri = path_to_uri(&doc.abs);
        other.ensure_session().await?.sync_document(&uri, &doc);
        other.wait_opened(Some(&uri)).await?;
        let (more, done) = ask(&mut other, query).await?;
        let unsure = other.take_unsure();
        symbols.extend(more);
        complete &= done && !unsure;
        o.mark_unsure(unsure);
    }
    crate::bundle::normalize::sort_by_location(&mut symbols);
    symbols.dedup();
    let unserved = unserved_code(o);
    complete &= unserved.is_empty();
    Ok(Outcome::read(
        SymbolsFacts {
            path: None,
            doc_version: None,
            query: Some(query.to_string()),
            symbols,
            provenance: Provenance::Lsp,
            unchecked: crate::bundle::facts::Unchecked::list(&unserved),
        },
        None,
        complete,
    ))
}

/// The workspace's code files no server serves (the one `--server` names, with it; none
/// with `--server-cmd`, whose types lanser does not know).
fn unserved_code(o: &Ctx<'_>) -> Vec<String> {
    match super::route::forced_def(o) {
        None => Vec::new(),
        Some(forced) => {
            crate::servers::unserved::unserved_code(o.config().routes(), forced, &o.ws().root)
        }
    }
}

/// `workspace/symbol` on `o`'s server, normalized; and whether it had loaded the project.
async fn ask(o: &mut Ctx<'_>, query: &str) -> Result<(Vec<Symbol>, bool)> {
    let complete = o.wait_ready().await?;
    let answer = o
        .ensure_session()
        .await?
        .request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
            query: query.to_string(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .await?;
    Ok((o.normalizer().search(&answer), complete))
}

/// The other servers that take a source of the workspace, each with its first such file.
fn other_servers(o: &Ctx<'_>) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    if super::route::forced(o.opts()) {
        return out;
    }
    for f in o.ws().index().sources() {
        if let Some(name) = o.config().taker(&f).filter(|n| *n != o.server_def().name) {
            out.entry(name.to_string()).or_insert(f);
        }
    }
    out
}
