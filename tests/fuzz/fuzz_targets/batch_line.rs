//! Batch request lines (`lanser batch`, one JSON object a line) from arbitrary bytes: never a
//! panic; a refused line gets a one-line reason; the same line always gives the same answer
//! (`cargo +nightly fuzz run batch_line`).
#![no_main]

use lanser::batch::LineParser;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    // Building the CLI's definitions costs more than parsing a line; batch keeps one too.
    static PARSER: RefCell<LineParser> = RefCell::new(LineParser::default());
}

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        let first = p.parse(line);
        if let Err(lanser::batch::BadLine { why, .. }) = &first {
            assert!(!why.trim().is_empty(), "an empty reason");
            assert!(!why.contains('\n'), "a multi-line reason: {why:?}");
        }
        let again = p.parse(line);
        assert_eq!(format!("{first:?}"), format!("{again:?}"));
    });
});
