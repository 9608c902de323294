//! Unified diffs for `lanser check --patch`. The first byte picks the mode:
//! - even: arbitrary text and an arbitrary patch (split at the first NUL): never a panic;
//!   a refusal is one line.
//! - odd: arbitrary old and new texts (split at the first NUL, `\r` removed): the diff lanser
//!   itself prints (`edits::unified`) parses, and applied to the old text gives exactly the
//!   new text (`cargo +nightly fuzz run patch`).
#![no_main]

use lanser::edits::{patch, unified};
use libfuzzer_sys::fuzz_target;

fn split(data: &[u8]) -> (String, String) {
    let at = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (a, b) = data.split_at(at);
    let b = b.get(1..).unwrap_or_default();
    (
        String::from_utf8_lossy(a).into_owned(),
        String::from_utf8_lossy(b).into_owned(),
    )
}

fn one_line(e: &lanser::error::LanserError) {
    assert!(
        !e.message.contains('\n'),
        "a multi-line refusal: {:?}",
        e.message
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (a, b) = split(rest);
    if mode % 2 == 0 {
        match patch::parse(&b) {
            Ok(files) => {
                for f in &files {
                    match patch::apply(&f.path, &a, f) {
                        Ok(_) => {}
                        Err(e) => one_line(&e),
                    }
                }
            }
            Err(e) => one_line(&e),
        }
        return;
    }
    let (old, new) = (a.replace('\r', ""), b.replace('\r', ""));
    let diff = unified("pkg/a.py", &old, &new);
    if old == new {
        return;
    }
    let files = patch::parse(&diff).unwrap_or_else(|e| panic!("own diff refused: {e}\n{diff}"));
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, "pkg/a.py");
    let applied = patch::apply("pkg/a.py", &old, &files[0])
        .unwrap_or_else(|e| panic!("own diff does not apply: {e}\n{diff}"));
    assert_eq!(applied, new, "diff:\n{diff}");
});
