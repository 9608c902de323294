//! `lanser locate SELECTOR [--preview]`: resolve a selector to a concrete range without asking
//! the server; `--preview` adds the lines it covers.

use crate::error::Result;
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::json;

pub fn run(o: &mut Orchestrator, selector: &str, preview: bool) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let resolution = o.resolution(&spec, &target);
    let doc = &target.doc;
    let (first, _) = doc.position(target.start, o.opts.index_io);
    let (last, _) = doc.position(target.end, o.opts.index_io);
    let lines: Vec<_> = (first..=last)
        .map(|l| {
            json!({
                "line": l + 1,
                "text": doc.index.line_text(&doc.text, l).unwrap_or_default(),
            })
        })
        .collect();
    let loc = o.normalizer().location(
        &crate::workspace::path_to_uri(&doc.abs),
        resolution.resolved.range,
    );
    Ok(Outcome {
        facts: json!({
            "target": {
                "path": doc.rel,
                "range": resolution.resolved.range,
                "selector": loc.selector,
                "text": &doc.text[target.start..target.end],
                "preview": if preview { Some(lines) } else { None },
            },
            "provenance": "parser",
        }),
        resolution: Some(resolution),
        complete: true,
        edits: None,
        reward: None,
    })
}
