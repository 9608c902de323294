//! Coordinate conversion on arbitrary UTF-8: `LineIndex` agrees with a naive model written
//! here (lines split at `\n`, `\r\n`, lone `\r`; columns counted in utf-8 bytes, utf-16 units
//! or code points), and byte offset → (line, column) → byte offset is the identity on every
//! character boundary, in all three units (`cargo +nightly fuzz run text`).
#![no_main]

use lanser::text::{Encoding, LineIndex, PosError};
use libfuzzer_sys::fuzz_target;

#[path = "common/model.rs"]
mod model;

use model::{lines as model_lines, units};

const ENCODINGS: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Codepoint];

/// Longer texts add no coverage, only time: every offset and column is checked.
const MAX_LEN: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.len() > MAX_LEN {
        return;
    }
    let idx = LineIndex::new(text);
    let lines = model_lines(text);
    assert_eq!(idx.line_count(), lines.len());
    for (l, &(s, e)) in lines.iter().enumerate() {
        assert_eq!(idx.line_span(l), Some((s, e)), "line {l}");
    }
    assert_eq!(idx.line_span(lines.len()), None);
    for enc in ENCODINGS {
        // Per line: every character boundary (content end included) with its column.
        let bounds: Vec<Vec<(usize, usize)>> = lines
            .iter()
            .map(|&(s, e)| {
                let content = &text[s..e];
                content
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([content.len()])
                    .map(|i| (s + i, units(enc, &content[..i])))
                    .collect()
            })
            .collect();
        for o in 0..=text.len() + 1 {
            // The line holding `o`; `o` moved back onto its content and a char boundary.
            let clamped = o.min(text.len());
            let l = lines.iter().rposition(|&(s, _)| s <= clamped).unwrap();
            let &(b, col) = bounds[l]
                .iter()
                .rev()
                .find(|&&(b, _)| b <= clamped)
                .unwrap();
            assert_eq!(idx.position(text, o, enc), (l, col), "offset {o} in {enc}");
            assert_eq!(
                idx.offset(text, l, col, enc),
                Ok(b),
                "back from {l}:{col} {enc}"
            );
            assert_eq!(idx.offset_clamped(text, l, col, enc), b);
        }
        for (l, &(s, e)) in lines.iter().enumerate() {
            let len = bounds[l].last().unwrap().1;
            assert_eq!(idx.line_len(text, l, enc), Some(len));
            // Every column: exact on a boundary, else inside a character, past the end out of
            // range; clamped lands on the last boundary at or before the column.
            let mut k = 0;
            for col in 0..=len + 1 {
                while k + 1 < bounds[l].len() && bounds[l][k + 1].1 <= col {
                    k += 1;
                }
                let (b, at) = bounds[l][k];
                let want = if at == col {
                    Ok(b)
                } else if col > len {
                    Err(PosError::ColumnOutOfRange { len })
                } else {
                    Err(PosError::InsideChar)
                };
                assert_eq!(idx.offset(text, l, col, enc), want, "{l}:{col} {enc}");
                assert_eq!(idx.offset_clamped(text, l, col, enc), b, "{l}:{col} {enc}");
                assert!(b >= s && b <= e);
            }
        }
        assert_eq!(
            idx.offset(text, lines.len(), 0, enc),
            Err(PosError::LineOutOfRange {
                line_count: lines.len()
            })
        );
        assert_eq!(idx.offset_clamped(text, lines.len(), 0, enc), text.len());
    }
});
