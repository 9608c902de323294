//! Trace files for `lanser replay` from arbitrary bytes: never a panic; a refusal names the
//! line; an accepted trace answers every accessor replay uses before it starts a server
//! (op command, status, exit code, selector, the compared bytes), and a recorded bundle shows
//! no difference from itself (`cargo +nightly fuzz run trace`).
#![no_main]

use lanser::replay::{comparable, first_difference, verify_op};
use lanser::trace::{replay_root, Trace, TraceError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let trace = match Trace::from_reader(data, "fuzz.jsonl") {
        Ok(t) => t,
        Err(e) => {
            if let TraceError::Malformed { line, .. } = &e {
                assert!(*line >= 1 && *line <= data.split(|&b| b == b'\n').count());
            }
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let _ = replay_root(&trace.header, None);
    for op in &trace.ops {
        let _ = (op.cmd(), op.status(), op.exit_code(), op.selector());
        let c = comparable(&op.bundle);
        assert_eq!(comparable(&c), c);
        assert!(first_difference(&op.bundle, &op.bundle).is_none());
        let told = verify_op(op, None).expect("no bundle is a mismatch");
        assert!(told.contains("no bundle"));
    }
    if let Some((before, eof)) = &trace.eof {
        assert!(*before <= trace.frames.len());
        let _ = eof.seq;
    }
});
