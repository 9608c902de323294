//! `lanser schema …` and `lanser completions SHELL`: print, export and validate the contracts.
//!
//! Exit codes (docs/schemas.md#validation): 0 valid, 2 a document that is not JSON or violates
//! its schema (and any usage error), 3 a file or directory that cannot be read, 1 a write
//! failure.

use super::{schema, Kind, Validator};
pub use crate::cli::SchemaCmd;
use crate::error::{ErrorCode, LanserError, Result};
use crate::exit::ExitStatus;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The operations' catalog's file name in an export.
pub const OPERATIONS_FILE: &str = "operations.json";

/// The schema as exported: pretty JSON with a final newline.
pub fn render(kind: Kind) -> String {
    let mut s = serde_json::to_string_pretty(&schema(kind)).expect("schemas serialize");
    s.push('\n');
    s
}

/// `lanser schema …`: the text for stdout and the exit status.
pub fn run(action: &SchemaCmd) -> Result<(ExitStatus, String)> {
    let print = |kind: Kind, out: &Option<PathBuf>| -> Result<(ExitStatus, String)> {
        match out {
            None => Ok((ExitStatus::Success, render(kind))),
            Some(path) => {
                write(path, &render(kind))?;
                Ok((ExitStatus::Success, String::new()))
            }
        }
    };
    match action {
        SchemaCmd::Selector { out } => print(Kind::Selector, out),
        SchemaCmd::Bundle { out } => print(Kind::Bundle, out),
        SchemaCmd::Batch { out } => print(Kind::Batch, out),
        SchemaCmd::Trace { out } => print(Kind::Trace, out),
        SchemaCmd::Operations { out } => {
            let text = crate::commands::catalog::render();
            match out {
                None => Ok((ExitStatus::Success, text)),
                Some(path) => {
                    write(path, &text)?;
                    Ok((ExitStatus::Success, String::new()))
                }
            }
        }
        SchemaCmd::Export { dir } => {
            std::fs::create_dir_all(dir).map_err(|e| {
                LanserError::internal(format!("schema export {}", dir.display())).with_source(e)
            })?;
            let mut text = String::new();
            for kind in Kind::ALL {
                let path = dir.join(kind.file_name());
                write(&path, &render(kind))?;
                let _ = writeln!(text, "{}", path.display());
            }
            let path = dir.join(OPERATIONS_FILE);
            write(&path, &crate::commands::catalog::render())?;
            let _ = writeln!(text, "{}", path.display());
            Ok((ExitStatus::Success, text))
        }
        SchemaCmd::Validate { kind, file } => {
            let validator = Validator::new(*kind);
            let report = validate_file(&validator, file)?;
            let mut text = report.lines;
            let _ = writeln!(
                text,
                "{}: {} of {} {} document(s) valid",
                file.display(),
                report.documents - report.invalid,
                report.documents,
                kind.name()
            );
            Ok((invalid_if(report.invalid > 0), text))
        }
        SchemaCmd::ValidateBatch { kind, dir } => {
            let validator = Validator::new(*kind);
            let entries = std::fs::read_dir(dir).map_err(|e| {
                LanserError::not_found(format!("validate-batch {}", dir.display())).with_source(e)
            })?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            let (mut text, mut bad_files, mut docs, mut bad_docs) = (String::new(), 0, 0, 0);
            for f in &files {
                let report = validate_file(&validator, f)?;
                text.push_str(&report.lines);
                docs += report.documents;
                bad_docs += report.invalid;
                if report.invalid > 0 {
                    bad_files += 1;
                }
            }
            let _ = writeln!(
                text,
                "{}: {} of {} file(s) valid, {} of {} {} document(s) valid",
                dir.display(),
                files.len() - bad_files,
                files.len(),
                docs - bad_docs,
                docs,
                kind.name()
            );
            Ok((invalid_if(bad_files > 0), text))
        }
    }
}

/// An invalid document is a usage error (exit 2).
fn invalid_if(invalid: bool) -> ExitStatus {
    if invalid {
        ExitStatus::Failed(ErrorCode::Usage)
    } else {
        ExitStatus::Success
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| {
        LanserError::internal(format!("cannot write {}", path.display())).with_source(e)
    })
}

struct Report {
    documents: usize,
    invalid: usize,
    /// `FILE:LINE: POINTER: message`, one per violation.
    lines: String,
}

/// The documents of a file: the whole file when it is one JSON value, else one per non-blank
/// line, each with its 1-based line number.
fn documents(text: &str) -> Vec<(usize, std::result::Result<Value, String>)> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return vec![(1, Ok(v))];
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, serde_json::from_str(l).map_err(|e| e.to_string())))
        .collect()
}

fn validate_file(validator: &Validator, file: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        LanserError::not_found(format!("cannot read {}", file.display())).with_source(e)
    })?;
    let docs = documents(&text);
    let mut report = Report {
        documents: docs.len(),
        invalid: 0,
        lines: String::new(),
    };
    if docs.is_empty() {
        report.invalid = 1;
        report.documents = 1;
        let _ = writeln!(report.lines, "{}: no JSON document", file.display());
    }
    for (line, doc) in docs {
        let violations = match doc {
            Ok(v) => validator.violations(&v),
            Err(e) => vec![super::Violation {
                pointer: String::new(),
                message: format!("not JSON: {e}"),
            }],
        };
        if !violations.is_empty() {
            report.invalid += 1;
        }
        for v in violations {
            let at = if v.pointer.is_empty() {
                "(root)"
            } else {
                &v.pointer
            };
            let _ = writeln!(
                report.lines,
                "{}:{line}: {at}: {}",
                file.display(),
                v.message
            );
        }
    }
    Ok(report)
}
