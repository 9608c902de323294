//! `lanser rename-file SRC DST [--dry-run | --apply]`: move a module file or a package
//! directory and rewrite every import of it, in one transaction.
//!
//! Pyright offers no file-rename support, so lanser computes the import updates itself
//! ([`crate::edits::rename_file`]); a server that advertises `workspace/willRenameFiles`
//! (basedpyright does) is asked first, and its edits win for the files it edits. The preview is
//! a git-style diff (renames, new `__init__.py` files, hunks at the moved paths) plus the
//! normalized WorkspaceEdit; `--apply` goes through the same envelope as `rename`
//! ([`super::mutate::maybe_apply`]): the text edits are written first, then the move.

use super::mutate::{self, MutationArgs};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Move, MoveKind, Provenance, RenameFileFacts};
use crate::bundle::Bundle;
use crate::bundle::Edits;
use crate::edits::rename_file;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use crate::safety::Jail;
use crate::workspace::path_to_uri;
use lsp_types::notification::DidRenameFiles;
use lsp_types::request::WillRenameFiles;
use lsp_types::{FileRename, RenameFilesParams};

/// Move a module file or package directory and rewrite every import of it: a preview
/// (diff + WorkspaceEdit) unless --apply
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct RenameFile {
    /// The module file (`src/pkg/mod.py`) or package directory to move
    pub src: String,
    /// Its new path (must not exist; missing parent directories are created)
    pub dst: String,
    /// Write the change (transactionally, inside the safety envelope)
    #[arg(long, conflicts_with = "dry_run")]
    pub apply: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub mutation: super::mutate::MutationFlags,
}

impl Operation for RenameFile {
    fn reads_file_set(&self) -> bool {
        true
    }
    fn refuses_unserved(&self) -> bool {
        false
    }
    const NAME: &'static str = "rename-file";
    type Facts = crate::bundle::facts::RenameFileFacts;
    fn changes_server_view(&self) -> bool {
        true
    }
    fn writes_files(&self) -> bool {
        self.mutation.writes(self.apply)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let m = self.mutation.args(self.apply).served(o);
        run(o, &self.src, &self.dst, &m).await
    }
    fn render(facts: &Self::Facts, bundle: &Bundle, page: &mut Page) {
        let files = facts.files.len();
        super::render::edits(page, bundle, files, facts.edit_count, facts.applied);
    }
}

pub async fn run(
    o: &mut Ctx<'_>,
    src: &str,
    dst: &str,
    m: &MutationArgs,
) -> Result<Outcome<RenameFileFacts>> {
    let jail = Jail::new(o.ws(), &m.allow, &m.deny)?;
    let mv = rename_file::resolve_paths(o.ws(), &jail, &o.opts().cwd, src, dst)?;
    let mut built = rename_file::build(o.ws(), &jail, &mv, o.encoding())?;
    let uris = RenameFilesParams {
        files: vec![FileRename {
            old_uri: path_to_uri(&o.ws().root.join(&mv.src)),
            new_uri: path_to_uri(&o.ws().root.join(&mv.dst)),
        }],
    };
    let session = o.ensure_session().await?;
    let (will, did) = (
        session.supports(Feature::WillRenameFiles),
        session.supports(Feature::DidRenameFiles),
    );
    let mut complete = true;
    let mut provenance = Provenance::Lanser;
    if will {
        complete = o.wait_ready().await?;
        let answer = o
            .ensure_session()
            .await?
            .request::<WillRenameFiles>(uris.clone())
            .await?;
        if let Some(edit) = answer {
            let theirs = mutate::plan(o, m, edit)?;
            rename_file::merge_server_edits(&mut built.plan, theirs);
            provenance = Provenance::LspLanser;
        }
    }
    let diff = rename_file::git_diff(&built, &mv);
    built.plan.git_patch = Some(diff.clone());
    // A move cannot be tried on in-memory documents: D stays unmeasured, S is measured.
    let (measured, _) = mutate::speculate(o, m, &built.plan, complete, None).await?;
    let applied = mutate::maybe_apply(o, m, &built.plan, complete, None)?;
    if applied && did {
        if let Some(s) = o.session() {
            s.notify::<DidRenameFiles>(uris);
        }
    }
    let pairs = |list: &[(String, String)]| -> Vec<Move> {
        list.iter()
            .map(|(from, to)| Move {
                from: from.clone(),
                to: to.clone(),
            })
            .collect()
    };
    Ok(Outcome {
        facts: RenameFileFacts {
            from: mv.src.clone(),
            to: mv.dst.clone(),
            kind: if mv.is_dir {
                MoveKind::Package
            } else {
                MoveKind::Module
            },
            modules: pairs(&built.modules),
            moved: pairs(&built.moved_files),
            created: built.created.clone(),
            files: built.plan.touched(),
            edit_count: built.plan.edit_count() as u64,
            applied,
            provenance,
        },
        resolution: None,
        complete,
        edits: Some(Edits {
            workspace_edit: Some(built.plan.to_json()),
            diff: Some(diff),
        }),
        reward: Some(measured),
    })
}
