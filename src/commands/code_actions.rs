//! `lanser code-actions SEL [--kind K] [--apply INDEX|TITLE [--dry-run]]`: list the server's
//! code actions at the selector, or preview/apply one. Edits come from the action itself,
//! from `codeAction/resolve`, or from the `workspace/applyEdit` requests its command makes the
//! server send; all go through the same envelope as rename.

use super::mutate::{self, MutationArgs};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{ActionSummary, CodeActionsFacts, Provenance};
use crate::bundle::Bundle;
use crate::error::{ErrorCode, LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::lsp::session::Session;
use crate::lsp::typed;
use crate::orchestrator::{Ctx, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::{CodeActionRequest, CodeActionResolveRequest, ExecuteCommand};
use lsp_types::{
    CodeAction, CodeActionContext, CodeActionKind, CodeActionOrCommand, CodeActionParams, Command,
    ExecuteCommandParams, Position, Range, TextDocumentPositionParams, WorkspaceEdit,
};
use serde_json::{json, Value};

/// List code actions at SELECTOR, or preview/apply one with --apply INDEX|TITLE
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CodeActions {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Only actions of this kind (quickfix, source.organizeImports, …)
    #[arg(long)]
    pub kind: Option<String>,
    /// The action to preview (with --dry-run) or apply, by index or exact title
    #[arg(long, value_name = "INDEX|TITLE")]
    #[serde(rename = "pick")]
    pub apply: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub mutation: super::mutate::MutationFlags,
}

impl Operation for CodeActions {
    const NAME: &'static str = "code-actions";
    type Facts = crate::bundle::facts::CodeActionsFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    /// The derived flags, plus `apply`: whether the picked action is written (a pick with
    /// --dry-run is a preview).
    fn args(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = super::args_of(self);
        let writes = self.mutation.writes(self.apply.is_some());
        m.insert("apply".into(), writes.into());
        m
    }
    fn changes_server_view(&self) -> bool {
        true
    }
    fn writes_files(&self) -> bool {
        self.mutation.writes(self.apply.is_some())
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let m = self.mutation.args(self.apply.is_some()).served(o);
        run(
            o,
            &self.selector,
            self.kind.as_deref(),
            self.apply.as_deref(),
            &m,
        )
        .await
    }
    fn render(facts: &Self::Facts, bundle: &Bundle, page: &mut Page) {
        if facts.chosen.is_none() {
            for a in &facts.actions {
                let kind = a.kind.as_deref().map(|k| format!(" [{k}]"));
                page.line(format_args!(
                    "{}: {}{}",
                    a.index,
                    a.title,
                    kind.unwrap_or_default()
                ));
            }
            if facts.actions.is_empty() {
                page.line("no code actions");
            }
        }
        let files = facts.files.as_ref().map_or(0, Vec::len);
        let edits = facts.edit_count.unwrap_or(0);
        let applied = facts.applied.unwrap_or(false);
        super::render::edits(page, bundle, files, edits, applied);
    }
}

/// Server commands that write to disk on their own; running one would bypass the envelope.
const WRITES_ITSELF: &[&str] = &["pyright.createtypestub"];

/// Server diagnostics overlapping `range` (lines), for the codeAction context.
fn overlapping(diags: &[Value], range: [u32; 4]) -> Vec<Value> {
    diags
        .iter()
        .filter(|d| {
            let s = d
                .pointer("/range/start/line")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32;
            let e = d
                .pointer("/range/end/line")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32;
            s <= range[2] && e >= range[0]
        })
        .cloned()
        .collect()
}

fn summary(index: usize, a: &CodeActionOrCommand) -> ActionSummary {
    let (title, kind, is_preferred, has_edit, command) = match a {
        // A bare Command: its title and what it runs.
        CodeActionOrCommand::Command(c) => (&c.title, None, false, false, Some(&c.command)),
        CodeActionOrCommand::CodeAction(a) => (
            &a.title,
            a.kind.as_ref().map(|k| k.as_str().to_string()),
            a.is_preferred.unwrap_or(false),
            a.edit.is_some(),
            a.command.as_ref().map(|c| &c.command),
        ),
    };
    ActionSummary {
        index: index as u64,
        title: title.clone(),
        kind,
        is_preferred,
        has_edit,
        command: command.cloned(),
    }
}

fn title(a: &CodeActionOrCommand) -> &str {
    match a {
        CodeActionOrCommand::Command(c) => &c.title,
        CodeActionOrCommand::CodeAction(a) => &a.title,
    }
}

/// The code actions the server offers over range `r` of `uri` (with the diagnostics there),
/// plus Pyright's organize-imports command as an action.
async fn offered(
    o: &mut Ctx<'_>,
    params: &TextDocumentPositionParams,
    r: [u32; 4],
    uri: &str,
    kind: Option<&str>,
) -> Result<Vec<CodeActionOrCommand>> {
    o.ensure_session().await?;
    super::gate::require::<CodeActionRequest>(o, Feature::CodeAction)?;
    let session = o.ensure_session().await?;
    let pulled = session.pull_diagnostics(uri).await.unwrap_or(Value::Null);
    let diags = pulled
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let diagnostics = serde_json::from_value(json!(overlapping(&diags, r))).map_err(|e| {
        LanserError::internal("the pulled diagnostics are not LSP diagnostics").with_source(e)
    })?;
    let point = |line, character| Position { line, character };
    let answer = session
        .request::<CodeActionRequest>(CodeActionParams {
            text_document: params.text_document.clone(),
            range: Range::new(point(r[0], r[1]), point(r[2], r[3])),
            context: CodeActionContext {
                diagnostics,
                only: kind.map(|k| vec![CodeActionKind::from(k.to_string())]),
                trigger_kind: None,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .await?;
    let mut actions: Vec<CodeActionOrCommand> = answer.into_iter().flatten().collect();
    let pyright = o.server_id().is_some_and(|s| s.name.contains("pyright"));
    if pyright && kind.is_none_or(|k| "source.organizeImports".starts_with(k)) {
        // Pyright sorts imports only through its `pyright.organizeimports` command (whose result
        // is the WorkspaceEdit) and offers no code action for it: lanser lists it as one.
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: "Organize imports".into(),
            kind: Some(CodeActionKind::SOURCE_ORGANIZE_IMPORTS),
            command: Some(Command {
                title: "Organize imports".into(),
                command: "pyright.organizeimports".into(),
                arguments: Some(vec![json!(uri)]),
            }),
            ..CodeAction::default()
        }));
    }
    Ok(actions)
}

/// The index of the action `pick` names (an index or an exact title).
fn choose(actions: &[CodeActionOrCommand], pick: &str, selector: &str) -> Result<usize> {
    Ok(match pick.parse::<usize>() {
        Ok(i) if i < actions.len() => i,
        _ => actions
            .iter()
            .position(|a| title(a) == pick)
            .ok_or_else(|| {
                LanserError::not_found(format!(
                    "no code action {pick:?} at {selector} ({} offered)",
                    actions.len()
                ))
            })?,
    })
}

/// The one WorkspaceEdit `action` makes: its own, resolved, or what its command sends.
async fn edit_of(
    session: &Session,
    action: &CodeActionOrCommand,
    pick: &str,
) -> Result<WorkspaceEdit> {
    let mut action = typed::json(action);
    let has_edit = action.get("edit").is_some();
    let resolvable = session.supports(Feature::CodeActionResolve);
    if !has_edit && resolvable && action.get("data").is_some() {
        let unresolved: CodeAction = serde_json::from_value(action).map_err(|e| {
            LanserError::internal("the offered code action is not an LSP CodeAction").with_source(e)
        })?;
        action = typed::json(
            &session
                .request::<CodeActionResolveRequest>(unresolved)
                .await?,
        );
    }
    let mut edits: Vec<WorkspaceEdit> = match action.get("edit") {
        Some(edit) => vec![crate::edits::workspace_edit(edit)?],
        None => Vec::new(),
    };
    let command = match action.get("command") {
        Some(Value::String(_)) => Some(action.clone()),
        Some(c) => Some(c.clone()),
        None => None,
    };
    if let Some(cmd) = command {
        if WRITES_ITSELF.contains(&cmd["command"].as_str().unwrap_or_default()) {
            return Err(LanserError::new(
                ErrorCode::UnsupportedCap,
                format!("code action {pick:?} runs {} which writes files itself, outside lanser's safety envelope; refused", cmd["command"]),
            ));
        }
        session.capture_edits(true);
        let arguments = match cmd.get("arguments") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        let ran = session
            .request::<ExecuteCommand>(ExecuteCommandParams {
                command: cmd["command"].as_str().unwrap_or_default().to_string(),
                arguments,
                work_done_progress_params: Default::default(),
            })
            .await;
        session.capture_edits(false);
        let result = ran?.unwrap_or(Value::Null);
        edits.extend(session.take_captured_edits());
        // Some commands return their WorkspaceEdit instead of pushing it.
        // (Pyright does both, with the same edit.)
        let is_edit = result.get("changes").is_some() || result.get("documentChanges").is_some();
        if is_edit {
            let result = crate::edits::workspace_edit(&result)?;
            if !edits.contains(&result) {
                edits.push(result);
            }
        }
    }
    if edits.len() > 1 {
        return Err(LanserError::new(
            ErrorCode::UnsupportedCap,
            format!("code action {pick:?} produced {} separate edits; lanser applies one transaction per action", edits.len()),
        ));
    }
    let Some(edit) = edits.pop() else {
        return Err(LanserError::not_found(format!(
            "code action {pick:?} changes nothing"
        )));
    };
    Ok(edit)
}

pub async fn run(
    o: &mut Ctx<'_>,
    selector: &str,
    kind: Option<&str>,
    pick: Option<&str>,
    m: &MutationArgs,
) -> Result<Outcome<CodeActionsFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    let complete = o.wait_ready().await?;
    let resolution = o.resolution(&spec, &target);
    let uri = path_to_uri(&target.doc.abs);
    let actions = offered(o, &params, resolution.resolved.range, &uri, kind).await?;
    let session = o.ensure_session().await?;
    let listed: Vec<ActionSummary> = actions
        .iter()
        .enumerate()
        .map(|(i, a)| summary(i, a))
        .collect();
    let Some(pick) = pick else {
        return Ok(Outcome::read(
            CodeActionsFacts {
                actions: listed,
                chosen: None,
                files: None,
                edit_count: None,
                applied: None,
                speculative_diagnostics: None,
                provenance: Provenance::Lsp,
            },
            Some(resolution),
            complete,
        ));
    };
    let index = choose(&actions, pick, selector)?;
    let edit = edit_of(session, &actions[index], pick).await?;
    let plan = mutate::plan(o, m, edit)?;
    let (measured, delta) = mutate::speculate(o, m, &plan, complete, Some(&resolution)).await?;
    let applied = mutate::maybe_apply(o, m, &plan, complete, Some(&resolution))?;
    Ok(Outcome {
        facts: CodeActionsFacts {
            actions: listed,
            chosen: Some(index as u64),
            files: Some(plan.touched()),
            edit_count: Some(plan.edit_count() as u64),
            applied: Some(applied),
            speculative_diagnostics: Some(delta),
            provenance: Provenance::Lsp,
        },
        resolution: Some(resolution),
        complete,
        edits: Some(mutate::edits_of(&plan)),
        reward: Some(measured),
    })
}
