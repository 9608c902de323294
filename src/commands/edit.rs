//! `lanser edit SEL (--replace-body | --replace | --insert-before | --insert-after |
//! --delete) [--text FILE|-]` (docs/editing.md): symbol-level edits of the definition a
//! selector lands in — the code `lanser source` gives (decorators, signature, docstring,
//! body) — shaped to fit by [`crate::edits::shape`], then written as an edit is a patch: the
//! verified write `apply --patch` uses ([`super::verified`]). `--delete` is a safe delete:
//! refused while the server finds references outside the definition, unless `--force`.

use super::apply::WriteFacts;
use super::mutate::MutationFlags;
use super::render::Page;
use super::source::Found;
use super::Operation;
use crate::bundle::normalize::Loc;
use crate::bundle::Bundle;
use crate::edits::shape::{self, Mode};
use crate::error::{ErrorCode, LanserError, Result};
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::References;
use lsp_types::{ReferenceContext, ReferenceParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Edit the definition at SELECTOR (one mode flag): a preview (diff, plan, diagnostics delta) unless --apply
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Edit {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Replace its body: everything after the header's `:` (docstring included) or between `{` and `}`
    #[arg(long, conflicts_with_all = ["replace", "insert_before", "insert_after", "delete"])]
    pub replace_body: bool,
    /// Replace the whole definition (decorators, signature, docstring, body)
    #[arg(long, conflicts_with_all = ["insert_before", "insert_after", "delete"])]
    pub replace: bool,
    /// Insert the text as a sibling definition before it
    #[arg(long, conflicts_with_all = ["insert_after", "delete"])]
    pub insert_before: bool,
    /// Insert the text as a sibling definition after it
    #[arg(long, conflicts_with = "delete")]
    pub insert_after: bool,
    /// Delete it; refused (E/STILL_REFERENCED, exit 78) while references remain, unless --force
    #[arg(long, conflicts_with = "text")]
    pub delete: bool,
    /// The new code (`-` for stdin); dedented, then indented to the target's level
    #[arg(long, value_name = "FILE")]
    pub text: Option<String>,
    /// With --delete: delete even while references remain
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub verified: super::verified::VerifiedFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub mutation: MutationFlags,
}

/// `edit`'s facts: the definition, the mode, and what the change is (as `apply`'s).
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditFacts {
    /// `replace-body`, `replace`, `insert-before`, `insert-after` or `delete`.
    pub mode: String,
    /// The definition's file, workspace-relative.
    pub path: String,
    /// Its qualified name (`Class.method`).
    pub qualname: String,
    /// `[startLine, startCol, endLine, endCol]` of its code before the edit (as `source`'s).
    pub range: [u32; 4],
    /// With `--delete --force`: the references that remain (else empty).
    pub references: Vec<Loc>,
    #[serde(flatten)]
    pub change: WriteFacts,
}

impl crate::bundle::facts::Facts for EditFacts {}

impl Edit {
    fn mode(&self) -> Result<Mode> {
        let flags = [
            (self.replace_body, Mode::ReplaceBody),
            (self.replace, Mode::Replace),
            (self.insert_before, Mode::InsertBefore),
            (self.insert_after, Mode::InsertAfter),
            (self.delete, Mode::Delete),
        ];
        flags.into_iter().find(|(on, _)| *on).map(|(_, m)| m).ok_or_else(|| {
            LanserError::usage(
                "edit needs one of --replace-body, --replace, --insert-before, --insert-after, --delete",
            )
        })
    }
}

impl Operation for Edit {
    fn reads_stdin(&self) -> bool {
        self.text.as_deref() == Some("-")
    }
    fn refuses_unserved(&self) -> bool {
        false
    }
    const NAME: &'static str = "edit";
    type Facts = EditFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    fn changes_server_view(&self) -> bool {
        true
    }
    /// It reads its text file when it runs.
    fn memoizable(&self) -> bool {
        false
    }
    fn writes_files(&self) -> bool {
        self.mutation.writes(self.verified.apply)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, self).await
    }
    fn render(facts: &Self::Facts, bundle: &Bundle, page: &mut Page) {
        page.line(format_args!(
            "{} {} ({}:{})",
            facts.mode,
            facts.qualname,
            facts.path,
            facts.range[0] + 1
        ));
        super::apply::render(&facts.change, bundle, page);
    }
}

async fn run(o: &mut Ctx<'_>, a: &Edit) -> Result<Outcome<EditFacts>> {
    let mode = a.mode()?;
    let given = match (mode, &a.text) {
        (Mode::Delete, _) => String::new(),
        (_, Some(path)) => super::check::read_input(o, "text", path)?,
        (_, None) => {
            return Err(LanserError::usage(format!(
                "--{} needs --text FILE (or `-` for stdin): the new code",
                mode.name()
            )))
        }
    };
    let found = super::source::definition(o, &a.selector)?;
    let references = match mode {
        Mode::Delete => remaining_references(o, &found).await?,
        _ => Vec::new(),
    };
    if !references.is_empty() && !a.force {
        return Err(still_referenced(&found, references));
    }
    let (doc, def) = (&found.doc, &found.def);
    let target = shape::Target {
        text: &doc.text,
        start: found.start,
        header_end: def.sig.1,
        end: def.node.1,
        python: doc.rel.ends_with(".py") || doc.rel.ends_with(".pyi"),
    };
    let (s, e, new) = shape::splice(&target, mode, &given)?;
    let text = format!("{}{new}{}", &doc.text[..s], &doc.text[e..]);
    let encoding = o.encoding();
    let (sl, sc) = doc.position(found.start, encoding);
    let (el, ec) = doc.position(def.node.1, encoding);
    let m = a.mutation.args(a.verified.apply);
    let changes = [(doc.clone(), text)];
    let v = super::verified::write(
        o,
        &m,
        a.verified.require_clean,
        &changes,
        Some(&found.resolution),
    )
    .await?;
    let facts = EditFacts {
        mode: mode.name().to_string(),
        path: doc.rel.clone(),
        qualname: def.qualname(),
        range: [sl as u32, sc as u32, el as u32, ec as u32],
        references,
        change: super::apply::write_facts(&v),
    };
    Ok(super::apply::outcome(v, facts, Some(found.resolution)))
}

/// The server's references to the definition's name outside the definition itself.
async fn remaining_references(o: &mut Ctx<'_>, found: &Found) -> Result<Vec<Loc>> {
    let at = crate::relocate::Target {
        doc: found.doc.clone(),
        start: found.def.name.0,
        end: found.def.name.1,
        evidence: None,
    };
    let params = ReferenceParams {
        text_document_position: o.position_params(&at).await?,
        context: ReferenceContext {
            include_declaration: false,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    o.wait_ready().await?;
    let answer = o
        .ensure_session()
        .await?
        .request::<References>(params)
        .await?;
    let all = o.normalizer().references(&answer);
    let enc = o.encoding();
    let first = found.doc.position(found.start, enc).0 as u32;
    let last = found.doc.position(found.def.node.1, enc).0 as u32;
    Ok(all
        .into_iter()
        .filter(|l| !(l.path == found.doc.rel && first <= l.range[0] && l.range[2] <= last))
        .collect())
}

/// `E/STILL_REFERENCED`: the references, the first few named in the message, all in details.
fn still_referenced(found: &Found, references: Vec<Loc>) -> LanserError {
    let shown: Vec<String> = references
        .iter()
        .take(5)
        .map(|l| format!("{}:{}:{}", l.path, l.range[0] + 1, l.range[1] + 1))
        .collect();
    let more = match references.len() > shown.len() {
        true => format!(" and {} more", references.len() - shown.len()),
        false => String::new(),
    };
    let mut e = LanserError::new(
        ErrorCode::StillReferenced,
        format!(
            "refusing to delete {}: {} reference(s) remain ({}{more}); pass --force to delete anyway; nothing was written",
            found.def.qualname(),
            references.len(),
            shown.join(", ")
        ),
    );
    e.details = Some(serde_json::json!({ "references": references }));
    e
}
