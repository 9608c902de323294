//! `lanser symbols FILE` (the file's outline) and `lanser symbols --query Q` (workspace
//! symbols; waits for the project to load, since Pyright answers empty before that).

use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Outcome};
use crate::selector::resolve::Document;
use crate::workspace::path_to_uri;
use serde_json::{json, Value};

pub async fn run(o: &mut Orchestrator, file: Option<&str>, query: Option<&str>) -> Result<Outcome> {
    match (file, query) {
        (Some(file), query) => outline(o, file, query).await,
        (None, Some(query)) => workspace(o, query).await,
        (None, None) => Err(LanserError::usage("symbols needs a FILE or --query TEXT")),
    }
}

async fn outline(o: &mut Orchestrator, file: &str, query: Option<&str>) -> Result<Outcome> {
    let (abs, rel) = o.ws.resolve_user_path(file, &o.opts.cwd)?;
    let doc = Document::load(abs, rel)?;
    let uri = path_to_uri(&doc.abs);
    o.ensure_session().await?.sync_document(&uri, &doc);
    o.wait_opened().await?;
    let session = o.ensure_session().await?;
    let raw = session
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await?;
    let mut n = o.normalizer();
    n.add_document(&doc);
    let mut symbols = n.document_symbols(&uri, &raw);
    if let Some(q) = query {
        let q = q.to_lowercase();
        symbols.retain(|s| {
            s.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.to_lowercase().contains(&q))
        });
    }
    Ok(Outcome {
        facts: json!({
            "path": doc.rel,
            "docVersion": doc.doc_version,
            "symbols": symbols,
            "provenance": "lsp",
        }),
        resolution: None,
        complete: true,
        edits: None,
        reward: None,
    })
}

async fn workspace(o: &mut Orchestrator, query: &str) -> Result<Outcome> {
    let complete = o.wait_ready().await?;
    let raw = o
        .ensure_session()
        .await?
        .request("workspace/symbol", json!({ "query": query }))
        .await?;
    let symbols = o.normalizer().workspace_symbols(&raw);
    Ok(Outcome {
        facts: json!({ "query": query, "symbols": symbols, "provenance": "lsp" }),
        resolution: None,
        complete,
        edits: None,
        reward: None,
    })
}
