//! `lanser inlay FILE [--range R]` (textDocument/inlayHint): the hints an editor shows inline —
//! inferred types (`: int` after a variable) and parameter names (`price:` before an argument)
//! — over the whole file or `--range` (`l,c->l,c`, 1-based, as a selector's `R(…)`), sorted by
//! position then label, paged as `hints`. Also the one reading of FILE + `--range` that
//! `format` shares. A server without `inlayHintProvider` (Pyright) gets `E/UNSUPPORTED_CAP`.

use super::gate::require;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Facts, Provenance};
use crate::bundle::{Bundle, Resolution};
use crate::document::Document;
use crate::error::{LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::lsp::typed;
use crate::orchestrator::{Ctx, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::InlayHintRequest;
use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, InlayHintParams, Position, Range};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Inlay hints of FILE (inferred types, parameter names), e.g. `lanser inlay src/app.py`
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Inlay {
    /// The file (workspace-relative or absolute)
    pub file: String,
    /// Only this range: `l,c->l,c` (1-based lines and columns, as a selector's R(…))
    #[arg(long, value_name = "L,C->L,C")]
    pub range: Option<String>,
}

/// One inlay hint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HintFact {
    /// 0-based `[line, col]` it is shown at, in the server's unit.
    pub position: [u32; 2],
    /// The text shown (its parts joined).
    pub label: String,
    /// `type` or `parameter`, when the server says.
    pub kind: Option<String>,
    /// `path@Lline:Ccol` (1-based, `--index-io` unit) of the position.
    pub selector: String,
}

/// The facts of `inlay`.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InlayFacts {
    /// The file, workspace-relative.
    pub path: String,
    /// The range asked about (`[startLine, startCol, endLine, endCol]`, server coordinates).
    pub range: [u32; 4],
    pub hints: Vec<HintFact>,
    pub provenance: Provenance,
}

impl Facts for InlayFacts {
    const PAGED: Option<&'static str> = Some("hints");
}

impl Operation for Inlay {
    fn files(&self, _: &crate::orchestrator::Options) -> Vec<String> {
        vec![self.file.clone()]
    }
    const NAME: &'static str = "inlay";
    type Facts = InlayFacts;
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.file, self.range.as_deref()).await
    }
    /// `path:line:col  label` a hint.
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        for h in &facts.hints {
            match super::render::place_of(&h.selector) {
                Some((path, line, col)) => {
                    page.line(format_args!("{path}:{line}:{col}  {}", h.label))
                }
                None => page.line(&h.label),
            }
        }
        if facts.hints.is_empty() {
            page.line("no inlay hints");
        }
    }
}

/// A file and a range in it, as `inlay` and `format` take them.
pub(super) struct FileRange {
    pub doc: Document,
    /// Server coordinates: the given range, else the whole file.
    pub range: [u32; 4],
    /// Whether `--range` was given.
    pub given: bool,
    /// The range's resolution block, when given.
    pub resolution: Option<Resolution>,
}

impl FileRange {
    pub fn lsp(&self) -> Range {
        let r = self.range;
        Range {
            start: Position::new(r[0], r[1]),
            end: Position::new(r[2], r[3]),
        }
    }
}

/// FILE and `--range` (`l,c->l,c` or `R(l,c->l,c)`: read as the selector `FILE@R(…)`), the
/// document opened in the server.
pub(super) async fn file_range(
    o: &mut Ctx<'_>,
    file: &str,
    range: Option<&str>,
) -> Result<FileRange> {
    let (abs, rel) = o.ws().resolve_user_path(file, &o.opts().cwd)?;
    let enc = o.encoding();
    let out = match range {
        Some(r) => {
            let inner = r.trim();
            let inner = inner
                .strip_prefix("R(")
                .and_then(|s| s.strip_suffix(')'))
                .unwrap_or(inner);
            let sel = format!("{}@R({inner})", crate::selector::spec::encode_path(&rel));
            let (spec, target) = o.resolve(&sel).map_err(|e| {
                LanserError::usage(format!("--range {r:?}: {}", e.message)).with_source(e)
            })?;
            let (sl, sc) = target.doc.position(target.start, enc);
            let (el, ec) = target.doc.position(target.end, enc);
            FileRange {
                range: [sl as u32, sc as u32, el as u32, ec as u32],
                given: true,
                resolution: Some(o.resolution(&spec, &target)),
                doc: target.doc,
            }
        }
        None => {
            let doc = Document::load(abs, rel)?;
            let (el, ec) = doc.position(doc.text.len(), enc);
            FileRange {
                range: [0, 0, el as u32, ec as u32],
                given: false,
                resolution: None,
                doc,
            }
        }
    };
    let uri = path_to_uri(&out.doc.abs);
    o.ensure_session().await?.sync_document(&uri, &out.doc);
    o.wait_opened(Some(&uri)).await?;
    Ok(out)
}

fn label(h: &InlayHint) -> String {
    match &h.label {
        InlayHintLabel::String(s) => s.clone(),
        InlayHintLabel::LabelParts(parts) => parts.iter().map(|p| p.value.as_str()).collect(),
    }
}

fn kind(k: Option<InlayHintKind>) -> Option<String> {
    match k? {
        InlayHintKind::TYPE => Some("type".into()),
        InlayHintKind::PARAMETER => Some("parameter".into()),
        _ => None,
    }
}

pub async fn run(o: &mut Ctx<'_>, file: &str, range: Option<&str>) -> Result<Outcome<InlayFacts>> {
    let at = file_range(o, file, range).await?;
    require::<InlayHintRequest>(o, Feature::InlayHint)?;
    let uri = path_to_uri(&at.doc.abs);
    let answer = o
        .ensure_session()
        .await?
        .request::<InlayHintRequest>(InlayHintParams {
            text_document: typed::document(&uri)?,
            range: at.lsp(),
            work_done_progress_params: Default::default(),
        })
        .await?;
    let mut n = o.normalizer();
    n.add_document(&at.doc);
    let mut hints: Vec<HintFact> = answer
        .unwrap_or_default()
        .iter()
        .map(|h| {
            let p = h.position;
            let loc = n.location(&uri, [p.line, p.character, p.line, p.character]);
            HintFact {
                position: [p.line, p.character],
                label: label(h).trim().to_string(),
                kind: kind(h.kind),
                selector: loc.selector,
            }
        })
        .collect();
    hints.sort();
    hints.dedup();
    Ok(Outcome::read(
        InlayFacts {
            path: at.doc.rel.clone(),
            range: at.range,
            hints,
            provenance: Provenance::Lsp,
        },
        at.resolution,
        true,
    ))
}
