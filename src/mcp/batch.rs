//! The `batch` tool: many requests in one call — `lanser batch` request lines, each answered
//! in order by the same warm session that answers single calls ([`super::answer`]), so each
//! bundle is the one the CLI prints for that line. `structuredContent` is `{"bundles": [...]}`,
//! one per request; the text is a compact summary, a few lines per request.
//!
//! A call is cancelled between requests, never inside one (a line may write).

use super::answer::{text_of, Answerer};
use super::tools::{self, Call, Common};
use crate::bundle::{Bundle, Status};
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use rmcp::service::{RequestContext, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The tool's name.
pub const NAME: &str = "batch";

/// The most lines of text one request's answer shows in the summary.
const LINES_PER_REQUEST: usize = 12;

/// The most requests one call takes.
const MAX_REQUESTS: usize = 1000;

/// A `batch` call's arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct BatchArgs {
    /// Request lines as `lanser batch` reads them, answered in order: each an object
    /// `{"cmd": "refs", "selector": "src/app.py@L3:load", "args": {"exclude-declaration": true}}`
    /// (`args` by the CLI's long flag names; positionals by name), or its JSON text.
    pub requests: Vec<Value>,
    #[serde(flatten)]
    pub common: Common,
}

/// The tool as `tools/list` shows it.
pub fn tool(bundle_schema: &Map<String, Value>) -> Tool {
    let input = tools::schema_of::<BatchArgs>();
    let output = json!({
        "type": "object",
        "properties": {"bundles": {
            "type": "array",
            "description": "One Analysis Bundle per request, in order (outline; the full schema is `lanser schema bundle`)",
            "items": Value::Object(super::output::any_bundle(bundle_schema)),
        }},
        "required": ["bundles"],
    });
    let title = "Many requests in one call";
    let description = "Answer many lanser requests in one call, in order, on the same warm \
        session: `requests` are `lanser batch` request lines (`{\"cmd\", \"selector\"?, \
        \"args\"?}`, `args` by the CLI's long flag names), any operation the other tools ask \
        for. `structuredContent.bundles` has one Analysis Bundle per request (each the one \
        `lanser <cmd> --json` prints); the text summarizes each in a few lines. Writes happen \
        only for a request whose args say apply.";
    let mut t = Tool::new(
        NAME,
        description,
        Arc::new(input.as_object().cloned().unwrap_or_default()),
    );
    t.title = Some(title.into());
    t.output_schema = Some(Arc::new(output.as_object().cloned().unwrap_or_default()));
    t.annotations = Some(
        ToolAnnotations::with_title(title)
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false),
    );
    t
}

/// The request lines of a call, each as a [`Call`] under the call's common options.
fn calls(arguments: Value) -> Result<Vec<Call>, String> {
    let a: BatchArgs = tools::parse(arguments)?;
    if a.requests.is_empty() {
        return Err("`requests` is empty: give one request line or more".into());
    }
    if a.requests.len() > MAX_REQUESTS {
        return Err(format!("at most {MAX_REQUESTS} requests per call"));
    }
    let base = tools::call(NAME, None, json!({}), &a.common);
    Ok(a.requests
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let line = match r {
                Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                other => other,
            };
            Call {
                line,
                globals: base.globals.clone(),
                stdin_patch: None,
                number: i + 1,
                offset: 0,
                limit: base.limit,
            }
        })
        .collect())
}

/// Answer a `batch` call.
pub async fn run(
    answerer: &Answerer,
    arguments: Value,
    cx: &RequestContext<RoleServer>,
    log: &super::logging::Log,
) -> CallToolResult {
    let calls = match calls(arguments) {
        Ok(c) => c,
        Err(why) => return super::failure(&format!("E/USAGE: {NAME}: {why}")),
    };
    let mut bundles = Vec::with_capacity(calls.len());
    let mut text = String::new();
    for (i, call) in calls.iter().enumerate() {
        if cx.ct.is_cancelled() {
            return super::failure("cancelled");
        }
        let jcs = tokio::select! {
            r = answerer.answer(call) => r,
            _ = super::progress(cx, &answerer.ws, log) => unreachable!("progress reports until the answer"),
        };
        let jcs = match jcs {
            Ok(j) => j,
            Err(e) => return super::failure(&format!("request {}: {}", i + 1, e.one_line())),
        };
        let (Ok(value), Ok(bundle)) = (
            serde_json::from_str::<Value>(&jcs),
            serde_json::from_str::<Bundle>(&jcs),
        ) else {
            return super::failure("E/INTERNAL: a bundle did not parse");
        };
        summarize(&mut text, i, &bundle, answerer, call.limit);
        bundles.push(value);
    }
    let mut r = CallToolResult::structured(json!({ "bundles": bundles }));
    r.content = vec![ContentBlock::text(text)];
    r
}

/// `[n] cmd ok|error` and the first lines of the bundle's text.
fn summarize(out: &mut String, i: usize, bundle: &Bundle, answerer: &Answerer, limit: usize) {
    let status = match bundle.status {
        Status::Ok => "ok",
        Status::Error => "error",
    };
    out.push_str(&format!("[{}] {} {status}\n", i + 1, bundle.request.cmd));
    let full = text_of(bundle, &answerer.ws, 0, limit.min(LINES_PER_REQUEST));
    let lines: Vec<&str> = full.lines().collect();
    for l in lines.iter().take(LINES_PER_REQUEST) {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
    if lines.len() > LINES_PER_REQUEST {
        out.push_str(&format!(
            "  [{} more lines; structuredContent.bundles[{i}] has the whole bundle]\n",
            lines.len() - LINES_PER_REQUEST
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_become_lines_under_the_common_options() {
        let got = calls(json!({
            "requests": [{"cmd": "source", "selector": "py://m#f"}, "{\"cmd\":\"status\"}", "nope"],
            "timeout": 9,
        }))
        .unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0].line,
            json!({"cmd": "source", "selector": "py://m#f"})
        );
        assert_eq!(got[1].line, json!({"cmd": "status"}));
        // Not JSON: left as text, so the line is answered as the error bundle it is.
        assert_eq!(got[2].line, json!("nope"));
        assert!(got.iter().all(|c| c.globals.timeout == Some(9)));
        assert_eq!(got.iter().map(|c| c.number).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(calls(json!({"requests": []})).is_err());
    }
}
