//! MCP resources: a file's outline, `lanser://outline/{path}`, which a host can attach to a
//! conversation as context. Reading one asks the `symbols` operation for the file, as the
//! `symbols` tool would (the same warm session, the same bundle): its contents are the text a
//! model reads (`text/plain`) and the Analysis Bundle (`application/json`). The template's
//! `path` completes to workspace files ([`super::complete`]).

use super::answer::{text_of, Answerer};
use super::tools::{call, Common};
use crate::bundle::Bundle;
use rmcp::model::{ReadResourceResult, ResourceContents, ResourceTemplate};
use serde_json::json;

/// The outline template's URI prefix (the path follows, `/`-separated, percent-encoded).
pub const OUTLINE: &str = "lanser://outline/";

/// The templates `resources/templates/list` shows.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{OUTLINE}{{path}}"), "outline")
            .with_title("A file's outline")
            .with_description(
                "The definitions of a workspace file (classes, functions, methods, variables) \
                 with their ranges and selectors, from its language server: \
                 `lanser symbols FILE`.",
            )
            .with_mime_type("text/plain"),
    ]
}

/// The workspace-relative path an outline URI names, or why it names none.
pub fn outline_path(uri: &str) -> Result<String, String> {
    let rest = uri
        .strip_prefix(OUTLINE)
        .ok_or_else(|| format!("unknown resource {uri:?} (lanser serves {OUTLINE}{{path}})"))?;
    let path = crate::workspace::uri::percent_decode(rest)
        .ok_or_else(|| format!("{uri:?}: a bad %-escape or not UTF-8"))?;
    if path.is_empty() || path.starts_with('/') || path.split('/').any(|c| c == "..") {
        return Err(format!("{uri:?}: not a workspace-relative path"));
    }
    Ok(path)
}

/// Read `uri`: the outline's text and bundle, or why not.
pub async fn read(answerer: &Answerer, uri: &str) -> Result<ReadResourceResult, String> {
    let path = outline_path(uri)?;
    let c = call("symbols", None, json!({"file": path}), &Common::default());
    let jcs = answerer.answer(&c).await.map_err(|e| e.one_line())?;
    let bundle: Bundle =
        serde_json::from_str(&jcs).map_err(|_| "E/INTERNAL: the bundle did not parse")?;
    if let Some(e) = &bundle.error {
        return Err(e.one_line());
    }
    let text = text_of(&bundle, &answerer.ws, 0, usize::MAX);
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/plain"),
        ResourceContents::text(jcs, uri).with_mime_type("application/json"),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outline_uri_names_a_workspace_path() {
        assert_eq!(
            outline_path("lanser://outline/src/a%20b.py").unwrap(),
            "src/a b.py"
        );
        assert!(outline_path("lanser://outline/../etc/passwd").is_err());
        assert!(outline_path("lanser://outline/%2Fetc").is_err());
        assert!(outline_path("file:///x.py")
            .unwrap_err()
            .contains("unknown resource"));
    }
}
