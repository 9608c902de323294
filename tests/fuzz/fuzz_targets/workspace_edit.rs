//! WorkspaceEdit normalization and the apply planner: arbitrary text edits (any positions, in
//! any column unit, as `changes` or as `documentChanges` split over several TextDocumentEdits)
//! on an arbitrary file. `Plan::from_workspace_edit` either refuses with a one-line error
//! (`E/APPLY_CONFLICT` for a position not in the file, a range that ends before it starts or
//! overlapping edits; `E/INDEXING_UNSUPPORTED` for a file that is not UTF-8), or plans exactly
//! the text computed here by a different method: edits applied one at a time from the end of
//! the file, with the model's own coordinates (`cargo +nightly fuzz run workspace_edit`).
#![no_main]

#[path = "common/model.rs"]
mod model;

use lanser::edits::{FileChange, Plan};
use lanser::error::ErrorCode;
use lanser::safety::Jail;
use lanser::text::Encoding;
use lanser::workspace::Workspace;
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

const ENCODINGS: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Codepoint];

/// A scratch workspace in memory-backed /dev/shm (else the temp dir), one per process.
fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base = PathBuf::from("/dev/shm");
        let base = if base.is_dir() {
            base
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("lanser-fuzz-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch workspace");
        dir.canonicalize().expect("scratch workspace")
    })
}

struct Input {
    enc: Encoding,
    /// 0: `changes`; else `documentChanges`, cut into TextDocumentEdits at that many edits.
    form: u8,
    /// (start line, start col, end line, end col, new text), in server order.
    edits: Vec<(u32, u32, u32, u32, String)>,
    file: Vec<u8>,
}

fn coord(u: &mut Unstructured) -> Result<u32> {
    // Mostly small (positions that exist), sometimes anything (u32::MAX included).
    Ok(if u.ratio(1, 8)? {
        u.arbitrary()?
    } else {
        u32::from(u.int_in_range(0u8..=24)?)
    })
}

fn input(data: &[u8]) -> Result<Input> {
    let mut u = Unstructured::new(data);
    let enc = *u.choose(&ENCODINGS)?;
    let form = u.int_in_range(0..=3)?;
    let n = u.int_in_range(0..=6)?;
    let mut edits = Vec::new();
    for _ in 0..n {
        let (a, b, c, d) = (
            coord(&mut u)?,
            coord(&mut u)?,
            coord(&mut u)?,
            coord(&mut u)?,
        );
        let len = u.int_in_range(0..=8)?;
        let bytes = u.bytes(len)?;
        edits.push((a, b, c, d, String::from_utf8_lossy(bytes).into_owned()));
    }
    Ok(Input {
        enc,
        form,
        edits,
        file: u.take_rest().to_vec(),
    })
}

fn workspace_edit(uri: &str, inp: &Input) -> Value {
    let edits: Vec<Value> = inp
        .edits
        .iter()
        .map(|(a, b, c, d, t)| {
            json!({"range": {"start": {"line": a, "character": b},
                             "end": {"line": c, "character": d}},
                   "newText": t})
        })
        .collect();
    if inp.form == 0 {
        return json!({ "changes": { uri: edits } });
    }
    let cut = usize::from(inp.form).min(edits.len());
    let groups: Vec<Value> = [&edits[..cut], &edits[cut..]]
        .iter()
        .map(|g| json!({"textDocument": {"uri": uri, "version": null}, "edits": g}))
        .collect();
    json!({ "documentChanges": groups })
}

/// The expected text, or the code of the expected refusal.
fn expected(inp: &Input) -> std::result::Result<String, ErrorCode> {
    let Ok(text) = std::str::from_utf8(&inp.file) else {
        return Err(ErrorCode::IndexingUnsupported);
    };
    let mut spans = Vec::new();
    for (k, (a, b, c, d, t)) in inp.edits.iter().enumerate() {
        let at = |l: u32, c: u32| model::offset(text, l.into(), c.into(), inp.enc);
        let (Some(s), Some(e)) = (at(*a, *b), at(*c, *d)) else {
            return Err(ErrorCode::ApplyConflict);
        };
        if e < s {
            return Err(ErrorCode::ApplyConflict);
        }
        spans.push((s, e, k, t.as_str()));
    }
    // Two edits clash when their insides meet, or one inserts strictly inside the other.
    for (i, x) in spans.iter().enumerate() {
        for y in &spans[i + 1..] {
            let inside = |p: usize, r: &(usize, usize, usize, &str)| r.0 < p && p < r.1;
            let meet = x.0.max(y.0) < x.1.min(y.1);
            let insert_inside = (x.0 == x.1 && inside(x.0, y)) || (y.0 == y.1 && inside(y.0, x));
            if meet || insert_inside {
                return Err(ErrorCode::ApplyConflict);
            }
        }
    }
    // From the end of the file backwards; at one point, the later edit goes in first.
    spans.sort_by(|x, y| (y.0, y.1, y.2).cmp(&(x.0, x.1, x.2)));
    let mut out = text.to_string();
    for (s, e, _, t) in spans {
        out.replace_range(s..e, t);
    }
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let Ok(inp) = input(data) else {
        return;
    };
    let root = root();
    let file = root.join("a.py");
    std::fs::write(&file, &inp.file).expect("write the scratch file");
    let ws = Workspace::discover(Some(root), root).expect("scratch workspace");
    let jail = Jail::new(&ws, &[], &[]).expect("jail");
    let uri = format!("file://{}", file.display());
    let raw = workspace_edit(&uri, &inp);
    // As a server's answer arrives: JSON read into the protocol's type, then planned.
    let got = lanser::edits::workspace_edit(&raw)
        .and_then(|edit| Plan::from_workspace_edit(&jail, edit, inp.enc));
    match (expected(&inp), got) {
        (Ok(want), Ok(plan)) => {
            assert_eq!(plan.changes.len(), 1, "one file, one change");
            let FileChange::Edit { new_text, .. } = &plan.changes[0] else {
                panic!("a text edit became {:?}", plan.changes[0]);
            };
            assert_eq!(new_text, &want, "edits {:?} on {:?}", inp.edits, inp.file);
            let _ = (
                plan.to_json(),
                plan.diff(),
                plan.touched(),
                plan.edit_count(),
            );
        }
        (Err(code), Err(e)) => {
            assert_eq!(e.code, code, "{}", e.message);
            assert!(
                !e.message.contains('\n'),
                "a multi-line refusal: {:?}",
                e.message
            );
        }
        (Ok(want), Err(e)) => panic!("refused ({}) where {want:?} was expected", e.message),
        (Err(code), Ok(plan)) => panic!("planned {plan:?} where {code:?} was expected"),
    }
});
