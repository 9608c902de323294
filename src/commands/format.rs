//! `lanser format FILE [--range R] [--apply]`: the server's formatter
//! (textDocument/formatting, or rangeFormatting with `--range`) as a mutation — by default a
//! preview (the unified diff and the normalized WorkspaceEdit; nothing is written), with
//! `--apply` written through the safety envelope (jail and filters, uncommitted changes, one
//! transaction) as rename is. The indentation the server is asked for is `--tab-size`
//! (default 4) spaces, or tabs with `--tabs` (formatters with their own configuration —
//! clang-format, gofmt, rustfmt — follow that instead). A server without the provider
//! (Pyright) gets `E/UNSUPPORTED_CAP`.

use super::gate::require;
use super::inlay::file_range;
use super::mutate::{self, MutationArgs};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Facts, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::lsp::typed;
use crate::orchestrator::{Ctx, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::{Formatting, RangeFormatting};
use lsp_types::{
    DocumentChanges, DocumentFormattingParams, DocumentRangeFormattingParams, FormattingOptions,
    OneOf, OptionalVersionedTextDocumentIdentifier, TextDocumentEdit, WorkspaceEdit,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Format FILE with the server's formatter: a preview (diff + plan) unless --apply
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Format {
    /// The file (workspace-relative or absolute)
    pub file: String,
    /// Only this range: `l,c->l,c` (1-based lines and columns, as a selector's R(…))
    #[arg(long, value_name = "L,C->L,C")]
    pub range: Option<String>,
    /// Spaces per indentation level the server is asked for
    #[arg(long, default_value_t = 4)]
    pub tab_size: u32,
    /// Indent with tabs instead of spaces
    #[arg(long)]
    pub tabs: bool,
    /// Write the change (transactionally, inside the safety envelope)
    #[arg(long, conflicts_with = "dry_run")]
    pub apply: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub mutation: super::mutate::MutationFlags,
}

/// The facts of `format`.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormatFacts {
    /// The file, workspace-relative.
    pub path: String,
    /// The range formatted (`[startLine, startCol, endLine, endCol]`, server coordinates),
    /// when `--range` was given.
    pub range: Option<[u32; 4]>,
    /// The files the edit touches (none when the file is already formatted).
    pub files: Vec<String>,
    pub edit_count: u64,
    /// Whether it was written.
    pub applied: bool,
    pub provenance: Provenance,
}

impl Facts for FormatFacts {}

impl Operation for Format {
    fn files(&self, _: &crate::orchestrator::Options) -> Vec<String> {
        vec![self.file.clone()]
    }
    const NAME: &'static str = "format";
    type Facts = FormatFacts;
    fn changes_server_view(&self) -> bool {
        self.writes_files()
    }
    fn writes_files(&self) -> bool {
        self.mutation.writes(self.apply)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let options = FormattingOptions {
            tab_size: self.tab_size,
            insert_spaces: !self.tabs,
            ..Default::default()
        };
        let m = self.mutation.args(self.apply).served(o);
        run(o, &self.file, self.range.as_deref(), options, &m).await
    }
    fn render(facts: &Self::Facts, bundle: &Bundle, page: &mut Page) {
        if facts.edit_count == 0 {
            page.line(format_args!("{} is already formatted", facts.path));
            return;
        }
        let files = facts.files.len();
        super::render::edits(page, bundle, files, facts.edit_count, facts.applied);
    }
}

pub async fn run(
    o: &mut Ctx<'_>,
    file: &str,
    range: Option<&str>,
    options: FormattingOptions,
    m: &MutationArgs,
) -> Result<Outcome<FormatFacts>> {
    let at = file_range(o, file, range).await?;
    let uri = path_to_uri(&at.doc.abs);
    let text_document = typed::document(&uri)?;
    let edits = if at.given {
        require::<RangeFormatting>(o, Feature::RangeFormatting)?;
        let params = DocumentRangeFormattingParams {
            text_document,
            range: at.lsp(),
            options,
            work_done_progress_params: Default::default(),
        };
        let session = o.ensure_session().await?;
        session.request::<RangeFormatting>(params).await?
    } else {
        require::<Formatting>(o, Feature::Formatting)?;
        let params = DocumentFormattingParams {
            text_document,
            options,
            work_done_progress_params: Default::default(),
        };
        let session = o.ensure_session().await?;
        session.request::<Formatting>(params).await?
    };
    let edits = edits.unwrap_or_default();
    // As documentChanges (what lanser declares it takes): one unversioned text edit.
    let changes = match edits.is_empty() {
        true => vec![],
        false => vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: typed::uri(&uri)?,
                version: None,
            },
            edits: edits.into_iter().map(OneOf::Left).collect(),
        }],
    };
    let edit = WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(changes)),
        ..Default::default()
    };
    let plan = mutate::plan(o, m, edit)?;
    let applied = mutate::maybe_apply(o, m, &plan, true, at.resolution.as_ref())?;
    Ok(Outcome {
        facts: FormatFacts {
            path: at.doc.rel.clone(),
            range: at.given.then_some(at.range),
            files: plan.touched(),
            edit_count: plan.edit_count() as u64,
            applied,
            provenance: Provenance::Lsp,
        },
        resolution: at.resolution,
        complete: true,
        edits: Some(mutate::edits_of(&plan)),
        reward: None,
    })
}
