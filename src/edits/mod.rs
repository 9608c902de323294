//! Edit plans: a server's WorkspaceEdit (`changes` or `documentChanges`, with create/rename/
//! delete file operations) turned into a checked, ordered list of file changes with the
//! `docVersion` each was computed against, its normalized JSON form, and a unified diff.
//!
//! Edits are applied to byte offsets (converted from server positions once, here), in
//! descending order; overlapping edits are rejected, never dropped. Every path is put through
//! the workspace jail before anything else looks at it. Writing is [`apply`]'s job.

pub mod apply;
mod disk;
mod git_mode;
pub mod import_map;
mod indent;
pub mod owned;
pub mod patch;
pub mod rename_file;
pub mod shape;

use crate::error::{ErrorCode, LanserError, Result};
use crate::safety::Jail;
use crate::selector::resolve::Document;
use crate::text::Encoding;
use lsp_types::{DocumentChangeOperation, DocumentChanges, OneOf, ResourceOp, WorkspaceEdit};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One text edit in server coordinates and as a byte span of the preview-time text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: [u32; 4],
    pub new_text: String,
    pub start: usize,
    pub end: usize,
}

/// A change to one path.
#[derive(Debug, Clone)]
pub enum FileChange {
    /// Text edits to an existing file.
    Edit {
        doc: Document,
        edits: Vec<Edit>,
        new_text: String,
    },
    Create {
        rel: String,
        abs: PathBuf,
        overwrite: bool,
        ignore_if_exists: bool,
    },
    Rename {
        from_rel: String,
        from: PathBuf,
        to_rel: String,
        to: PathBuf,
        overwrite: bool,
        ignore_if_exists: bool,
    },
    Delete {
        rel: String,
        abs: PathBuf,
        recursive: bool,
        ignore_if_not_exists: bool,
    },
}

/// Every change of one WorkspaceEdit, in the order the server gave them.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    /// A git-style patch of the whole plan, file operations included, for `--apply-mode git`
    /// (without it, git mode takes [`Plan::diff`] and text edits only).
    pub git_patch: Option<String>,
}

fn uri_str(u: &lsp_types::Uri) -> &str {
    u.as_str()
}

/// A WorkspaceEdit that came as JSON (a command's result, a captured `workspace/applyEdit`).
pub fn workspace_edit(raw: &Value) -> Result<WorkspaceEdit> {
    serde_json::from_value(raw.clone())
        .map_err(|e| LanserError::internal("server sent a malformed WorkspaceEdit").with_source(e))
}

impl Plan {
    /// Build and check a plan. `server` is the encoding of the edit's positions.
    pub fn from_workspace_edit(jail: &Jail, we: WorkspaceEdit, server: Encoding) -> Result<Plan> {
        let mut builder = Builder {
            jail,
            server,
            plan: Plan::default(),
            pending: BTreeMap::new(),
        };
        match we.document_changes {
            Some(DocumentChanges::Edits(edits)) => {
                for e in edits {
                    builder.text_edits(uri_str(&e.text_document.uri), e.edits)?;
                }
            }
            Some(DocumentChanges::Operations(ops)) => {
                for op in ops {
                    match op {
                        DocumentChangeOperation::Edit(e) => {
                            builder.text_edits(uri_str(&e.text_document.uri), e.edits)?
                        }
                        DocumentChangeOperation::Op(op) => builder.resource_op(op)?,
                    }
                }
            }
            None => {
                let mut changes: Vec<_> = we.changes.unwrap_or_default().into_iter().collect();
                changes.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
                for (uri, edits) in changes {
                    builder
                        .text_edits(uri_str(&uri), edits.into_iter().map(OneOf::Left).collect())?;
                }
            }
        }
        builder.finish()
    }

    /// Paths this plan touches (sources and destinations), relative.
    pub fn touched(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .changes
            .iter()
            .flat_map(|c| match c {
                FileChange::Edit { doc, .. } => vec![doc.rel.clone()],
                FileChange::Create { rel, .. } | FileChange::Delete { rel, .. } => {
                    vec![rel.clone()]
                }
                FileChange::Rename {
                    from_rel, to_rel, ..
                } => {
                    vec![from_rel.clone(), to_rel.clone()]
                }
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Where `path` is once the plan's renames are done (a path inside a renamed directory
    /// moves with it).
    pub fn final_path(&self, path: &std::path::Path) -> PathBuf {
        let mut p = path.to_path_buf();
        for c in &self.changes {
            if let FileChange::Rename { from, to, .. } = c {
                if let Ok(rest) = p.strip_prefix(from) {
                    p = if rest.as_os_str().is_empty() {
                        to.clone()
                    } else {
                        to.join(rest)
                    };
                }
            }
        }
        p
    }

    pub fn edit_count(&self) -> usize {
        self.changes
            .iter()
            .map(|c| match c {
                FileChange::Edit { edits, .. } => edits.len(),
                _ => 1,
            })
            .sum()
    }

    /// The normalized WorkspaceEdit of the bundle: files sorted by path, edits by range.
    pub fn to_json(&self) -> Value {
        let mut files = Vec::new();
        let mut operations = Vec::new();
        for c in &self.changes {
            match c {
                FileChange::Edit { doc, edits, .. } => files.push(json!({
                    "path": doc.rel,
                    "docVersion": doc.doc_version,
                    "edits": edits.iter().map(|e| json!({"range": e.range, "newText": e.new_text})).collect::<Vec<_>>(),
                })),
                FileChange::Create { rel, overwrite, ignore_if_exists, .. } => operations.push(json!({
                    "kind": "create", "path": rel, "overwrite": overwrite, "ignoreIfExists": ignore_if_exists,
                })),
                FileChange::Rename { from_rel, to_rel, overwrite, ignore_if_exists, .. } => operations.push(json!({
                    "kind": "rename", "path": from_rel, "newPath": to_rel,
                    "overwrite": overwrite, "ignoreIfExists": ignore_if_exists,
                })),
                FileChange::Delete { rel, recursive, ignore_if_not_exists, .. } => operations.push(json!({
                    "kind": "delete", "path": rel, "recursive": recursive, "ignoreIfNotExists": ignore_if_not_exists,
                })),
            }
        }
        files.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
        json!({ "files": files, "operations": operations })
    }

    /// A unified diff (`a/` and `b/` prefixes, as `git apply` takes) of the text edits.
    pub fn diff(&self) -> String {
        let mut edits: Vec<(&Document, &str)> = self
            .changes
            .iter()
            .filter_map(|c| match c {
                FileChange::Edit { doc, new_text, .. } => Some((doc, new_text.as_str())),
                _ => None,
            })
            .collect();
        edits.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
        edits
            .into_iter()
            .map(|(doc, new)| unified(&doc.rel, &doc.text, new))
            .collect()
    }
}

/// A unified diff of one file.
pub fn unified(rel: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string()
}

struct Builder<'a> {
    jail: &'a Jail,
    server: Encoding,
    plan: Plan,
    /// Text edits per file, gathered across TextDocumentEdits.
    pending: BTreeMap<String, (Document, Vec<Edit>)>,
}

impl Builder<'_> {
    fn text_edits(
        &mut self,
        uri: &str,
        edits: Vec<OneOf<lsp_types::TextEdit, lsp_types::AnnotatedTextEdit>>,
    ) -> Result<()> {
        let (abs, rel) = self.jail.check_uri(uri)?;
        if !self.pending.contains_key(&rel) {
            // Text edits apply to files as they are on disk; an edit to a file the same plan
            // only creates or renames into is refused here (not found), not guessed at.
            let doc = Document::load(abs, rel.clone())?;
            self.pending.insert(rel.clone(), (doc, Vec::new()));
        }
        let (doc, list) = self.pending.get_mut(&rel).expect("inserted above");
        for e in edits {
            let te = match e {
                OneOf::Left(t) => t,
                OneOf::Right(a) => a.text_edit,
            };
            let r = te.range;
            let range = [r.start.line, r.start.character, r.end.line, r.end.character];
            let pos = |l: u32, c: u32| {
                doc.index
                    .offset(&doc.text, l as usize, c as usize, self.server)
                    .map_err(|_| {
                        LanserError::new(
                            ErrorCode::ApplyConflict,
                            format!(
                                "edit position {}:{} is not in {}",
                                u64::from(l) + 1,
                                u64::from(c) + 1,
                                doc.rel
                            ),
                        )
                    })
            };
            let (start, end) = (pos(range[0], range[1])?, pos(range[2], range[3])?);
            if end < start {
                // Applied as given, the text between the two ends came out twice.
                let [l1, c1, l2, c2] = range.map(|n| u64::from(n) + 1);
                return Err(LanserError::new(
                    ErrorCode::ApplyConflict,
                    format!(
                        "edit range {l1}:{c1}-{l2}:{c2} in {} ends before it starts; \
                         nothing was applied",
                        doc.rel
                    ),
                ));
            }
            list.push(Edit {
                range,
                new_text: te.new_text,
                start,
                end,
            });
        }
        Ok(())
    }

    fn resource_op(&mut self, op: ResourceOp) -> Result<()> {
        self.flush();
        let change = match op {
            ResourceOp::Create(c) => {
                let (abs, rel) = self.jail.check_uri(uri_str(&c.uri))?;
                let o = c.options;
                FileChange::Create {
                    rel,
                    abs,
                    overwrite: o.as_ref().and_then(|o| o.overwrite).unwrap_or(false),
                    ignore_if_exists: o.as_ref().and_then(|o| o.ignore_if_exists).unwrap_or(false),
                }
            }
            ResourceOp::Rename(r) => {
                let (from, from_rel) = self.jail.check_uri(uri_str(&r.old_uri))?;
                let (to, to_rel) = self.jail.check_uri(uri_str(&r.new_uri))?;
                let o = r.options;
                FileChange::Rename {
                    from_rel,
                    from,
                    to_rel,
                    to,
                    overwrite: o.as_ref().and_then(|o| o.overwrite).unwrap_or(false),
                    ignore_if_exists: o.as_ref().and_then(|o| o.ignore_if_exists).unwrap_or(false),
                }
            }
            ResourceOp::Delete(d) => {
                let (abs, rel) = self.jail.check_uri(uri_str(&d.uri))?;
                let o = d.options;
                FileChange::Delete {
                    rel,
                    abs,
                    recursive: o.as_ref().and_then(|o| o.recursive).unwrap_or(false),
                    ignore_if_not_exists: o
                        .as_ref()
                        .and_then(|o| o.ignore_if_not_exists)
                        .unwrap_or(false),
                }
            }
        };
        self.plan.changes.push(change);
        Ok(())
    }

    /// Move gathered text edits into the plan (before a file operation, and at the end).
    fn flush(&mut self) {
        for (_, (doc, edits)) in std::mem::take(&mut self.pending) {
            self.plan.changes.push(FileChange::Edit {
                new_text: String::new(),
                doc,
                edits,
            });
        }
    }

    fn finish(mut self) -> Result<Plan> {
        self.flush();
        for c in &mut self.plan.changes {
            if let FileChange::Edit {
                doc,
                edits,
                new_text,
            } = c
            {
                *new_text = apply_edits(doc, edits)?;
            }
        }
        Ok(self.plan)
    }
}

/// Apply edits to a document's text; overlapping edits are an error. Edits are sorted by
/// position (stable, so inserts at one point keep the server's order).
pub fn apply_edits(doc: &Document, edits: &mut [Edit]) -> Result<String> {
    edits.sort_by_key(|e| (e.start, e.end));
    for pair in edits.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.start < a.end {
            return Err(LanserError::new(
                ErrorCode::ApplyConflict,
                format!(
                    "overlapping edits in {} at {}:{} and {}:{}; nothing was applied",
                    doc.rel,
                    a.range[0] + 1,
                    a.range[1] + 1,
                    b.range[0] + 1,
                    b.range[1] + 1
                ),
            ));
        }
    }
    let mut out = String::with_capacity(doc.text.len());
    let mut at = 0;
    for e in edits.iter() {
        out.push_str(&doc.text[at..e.start]);
        out.push_str(&e.new_text);
        at = e.end;
    }
    out.push_str(&doc.text[at..]);
    Ok(out)
}

/// A valid new Python name: an identifier that is not a keyword (else E/USAGE).
pub fn check_name(name: &str) -> Result<()> {
    if !crate::python::is_identifier(name) {
        return Err(LanserError::usage(format!(
            "{name:?} is not a valid Python identifier"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha256_tagged;
    use crate::text::LineIndex;

    fn doc(text: &str) -> Document {
        Document {
            abs: PathBuf::from("/w/a.py"),
            rel: "a.py".into(),
            text: text.into(),
            index: LineIndex::new(text),
            doc_version: sha256_tagged(text.as_bytes()),
        }
    }

    fn edit(d: &Document, l: u32, c: u32, l2: u32, c2: u32, t: &str) -> Edit {
        let off = |l: u32, c: u32| {
            d.index
                .offset(&d.text, l as usize, c as usize, Encoding::Utf16)
                .unwrap()
        };
        Edit {
            range: [l, c, l2, c2],
            new_text: t.into(),
            start: off(l, c),
            end: off(l2, c2),
        }
    }

    #[test]
    fn edits_keep_crlf_bom_and_final_newline() {
        let d = doc("\u{feff}x = 1\r\ny = x\r\n");
        let mut e = vec![edit(&d, 1, 4, 1, 5, "zz"), edit(&d, 0, 1, 0, 2, "zz")];
        assert_eq!(
            apply_edits(&d, &mut e).unwrap(),
            "\u{feff}zz = 1\r\ny = zz\r\n"
        );
    }

    #[test]
    fn overlapping_edits_are_rejected() {
        let d = doc("abcdef\n");
        let mut e = vec![edit(&d, 0, 0, 0, 3, "x"), edit(&d, 0, 2, 0, 4, "y")];
        let err = apply_edits(&d, &mut e).unwrap_err();
        assert_eq!(err.code, ErrorCode::ApplyConflict);
        assert!(err.message.contains("overlapping"), "{}", err.message);
    }

    /// Plan one edit of `a.py` (holding `abcdef\n`) from `start` to `end` (line, character).
    fn plan_one(start: (u32, u32), end: (u32, u32)) -> Result<Plan> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "abcdef\n").unwrap();
        let ws = crate::workspace::Workspace::discover(Some(dir.path()), dir.path()).unwrap();
        let jail = Jail::new(&ws, &[], &[]).unwrap();
        let uri = format!("file://{}/a.py", ws.root.display());
        let range = json!({"start": {"line": start.0, "character": start.1},
                           "end": {"line": end.0, "character": end.1}});
        let raw = json!({"changes": {uri: [{"range": range, "newText": "X"}]}});
        Plan::from_workspace_edit(&jail, workspace_edit(&raw)?, Encoding::Utf16)
    }

    /// Fuzz find (workspace_edit): a range whose end comes before its start was applied,
    /// writing the text between the two ends twice; it is refused like an overlap.
    #[test]
    fn reversed_edit_range_is_refused() {
        let err = plan_one((0, 4), (0, 2)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ApplyConflict);
        assert_eq!(
            err.message,
            "edit range 1:5-1:3 in a.py ends before it starts; nothing was applied"
        );
        assert_eq!(plan_one((0, 2), (0, 4)).unwrap().edit_count(), 1);
    }

    /// Fuzz find (workspace_edit): a position at line or character 4294967295 overflowed
    /// (a panic in debug builds) while its refusal was being worded.
    #[test]
    fn edit_position_at_u32_max_is_refused_without_overflow() {
        let err = plan_one((u32::MAX, 0), (u32::MAX, 0)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ApplyConflict);
        assert_eq!(err.message, "edit position 4294967296:1 is not in a.py");
        let err = plan_one((0, u32::MAX), (0, u32::MAX)).unwrap_err();
        assert_eq!(err.message, "edit position 1:4294967296 is not in a.py");
    }

    #[test]
    fn adjacent_and_same_point_inserts_are_kept_in_order() {
        let d = doc("ab\n");
        let mut e = vec![
            edit(&d, 0, 1, 0, 1, "1"),
            edit(&d, 0, 1, 0, 1, "2"),
            edit(&d, 0, 0, 0, 1, "A"),
        ];
        assert_eq!(apply_edits(&d, &mut e).unwrap(), "A12b\n");
    }
}
