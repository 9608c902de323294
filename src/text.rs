//! Text coordinates: byte offsets inside a file's UTF-8 text, and their conversion to and from
//! (line, column) pairs in the three column units lanser speaks (docs/coordinates.md).
//!
//! Everything inside lanser is a byte offset. Lines and columns exist only at the edges: the
//! CLI (1-based, `--index-io` unit) and the server (0-based, negotiated `positionEncoding`).
//! Line terminators are `\n`, `\r\n` and a lone `\r`, as in LSP.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A column unit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
pub enum Encoding {
    #[serde(rename = "utf-8")]
    Utf8,
    #[serde(rename = "utf-16")]
    Utf16,
    /// Unicode scalar values.
    #[default]
    #[serde(rename = "codepoint")]
    Codepoint,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
            Encoding::Codepoint => "codepoint",
        }
    }

    pub fn parse(s: &str) -> Option<Encoding> {
        match s {
            "utf-8" | "utf8" => Some(Encoding::Utf8),
            "utf-16" | "utf16" => Some(Encoding::Utf16),
            "codepoint" | "utf-32" | "utf32" => Some(Encoding::Codepoint),
            _ => None,
        }
    }

    fn width(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Codepoint => 1,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a (line, column) pair names no byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PosError {
    /// 0-based line past the end; `line_count` lines exist.
    LineOutOfRange { line_count: usize },
    /// Column past the end of the line; the line is `len` units long.
    ColumnOutOfRange { len: usize },
    /// The column falls inside a character that takes several units.
    InsideChar,
}

/// Line starts of one text, for offset ↔ (line, column) conversion.
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset where each line starts.
    starts: Vec<usize>,
    /// Byte offset where each line's content ends (before its terminator).
    ends: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut ends = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    ends.push(i);
                    starts.push(i + 1);
                }
                b'\r' => {
                    ends.push(i);
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        ends.push(bytes.len());
        LineIndex { starts, ends }
    }

    /// Number of lines; a final newline opens one more (empty) line, as in LSP.
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Byte range of line `line` (0-based) without its terminator.
    pub fn line_span(&self, line: usize) -> Option<(usize, usize)> {
        Some((*self.starts.get(line)?, self.ends[line]))
    }

    /// The text of line `line` (0-based) without its terminator.
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> Option<&'t str> {
        let (s, e) = self.line_span(line)?;
        Some(&text[s..e])
    }

    /// Length of a line in `enc` units.
    pub fn line_len(&self, text: &str, line: usize, enc: Encoding) -> Option<usize> {
        Some(
            self.line_text(text, line)?
                .chars()
                .map(|c| enc.width(c))
                .sum(),
        )
    }

    /// Byte offset of a 0-based (line, column); the column may equal the line's length.
    pub fn offset(
        &self,
        text: &str,
        line: usize,
        col: usize,
        enc: Encoding,
    ) -> Result<usize, PosError> {
        let Some(line_str) = self.line_text(text, line) else {
            return Err(PosError::LineOutOfRange {
                line_count: self.line_count(),
            });
        };
        let start = self.starts[line];
        let mut units = 0;
        for (i, c) in line_str.char_indices() {
            if units == col {
                return Ok(start + i);
            }
            units += enc.width(c);
            if units > col {
                return Err(PosError::InsideChar);
            }
        }
        if units == col {
            Ok(start + line_str.len())
        } else {
            Err(PosError::ColumnOutOfRange { len: units })
        }
    }

    /// Like [`LineIndex::offset`], but clamps a line past the end to the end of the text and a
    /// column past the line end (or inside a character) to the nearest character boundary
    /// before it. For positions a server sends, which lanser must never reject.
    pub fn offset_clamped(&self, text: &str, line: usize, col: usize, enc: Encoding) -> usize {
        let Some(line_str) = self.line_text(text, line) else {
            return text.len();
        };
        let start = self.starts[line];
        let mut units = 0;
        for (i, c) in line_str.char_indices() {
            let w = enc.width(c);
            if units + w > col {
                return start + i;
            }
            units += w;
        }
        start + line_str.len()
    }

    /// 0-based (line, column in `enc`) of a byte offset; an offset inside a character or a
    /// line terminator is moved back to the boundary before it.
    pub fn position(&self, text: &str, offset: usize, enc: Encoding) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.starts[line];
        let end = offset.min(self.ends[line]);
        let col = text[start..]
            .char_indices()
            .take_while(|(i, c)| start + i + c.len_utf8() <= end)
            .map(|(_, c)| enc.width(c))
            .sum();
        (line, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Encoding::*;

    #[test]
    fn line_starts_for_all_terminators() {
        let t = "a\r\nbc\rd\n";
        let idx = LineIndex::new(t);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(idx.line_text(t, 0), Some("a"));
        assert_eq!(idx.line_text(t, 1), Some("bc"));
        assert_eq!(idx.line_text(t, 2), Some("d"));
        assert_eq!(idx.line_text(t, 3), Some(""));
        assert_eq!(idx.line_text(t, 4), None);
    }

    #[test]
    fn astral_plane_columns_per_encoding() {
        // "x = "😀😀"; y = x": the `y` sits after two 4-byte, 2-unit emoji.
        let t = "x = \"😀😀\"; y = x\n";
        let idx = LineIndex::new(t);
        let y = t.find("y =").unwrap();
        assert_eq!(idx.position(t, y, Utf16), (0, 12));
        assert_eq!(idx.position(t, y, Codepoint), (0, 10));
        assert_eq!(idx.position(t, y, Utf8), (0, 16));
        for enc in [Utf8, Utf16, Codepoint] {
            let (l, c) = idx.position(t, y, enc);
            assert_eq!(idx.offset(t, l, c, enc), Ok(y), "{enc}");
        }
    }

    #[test]
    fn column_inside_a_character_is_a_mismatch() {
        let t = "😀a";
        let idx = LineIndex::new(t);
        assert_eq!(idx.offset(t, 0, 1, Utf16), Err(PosError::InsideChar));
        assert_eq!(idx.offset(t, 0, 2, Utf8), Err(PosError::InsideChar));
        assert_eq!(idx.offset(t, 0, 1, Codepoint), Ok(4));
    }

    /// Fuzz find (text): an offset inside a character counted that character, moving the
    /// position forward past it instead of back to the boundary before it.
    #[test]
    fn offset_inside_a_character_moves_back() {
        let t = "a\n😀é";
        let idx = LineIndex::new(t);
        // 😀 spans bytes 2..6 and é 6..8.
        for (inside, boundary) in [(3, 2), (5, 2), (7, 6)] {
            for enc in [Utf8, Utf16, Codepoint] {
                let (l, c) = idx.position(t, inside, enc);
                assert_eq!(
                    idx.offset(t, l, c, enc),
                    Ok(boundary),
                    "offset {inside} {enc}"
                );
            }
        }
    }

    #[test]
    fn out_of_range_reports_sizes() {
        let t = "ab\ncd";
        let idx = LineIndex::new(t);
        assert_eq!(idx.offset(t, 0, 2, Utf8), Ok(2));
        assert_eq!(
            idx.offset(t, 0, 3, Utf8),
            Err(PosError::ColumnOutOfRange { len: 2 })
        );
        assert_eq!(
            idx.offset(t, 5, 0, Utf8),
            Err(PosError::LineOutOfRange { line_count: 2 })
        );
    }

    #[test]
    fn crlf_columns_exclude_the_terminator() {
        let t = "ab\r\ncd\r\n";
        let idx = LineIndex::new(t);
        assert_eq!(idx.position(t, 3, Utf16), (0, 2));
        assert_eq!(idx.offset(t, 1, 1, Utf16), Ok(5));
        assert_eq!(idx.offset_clamped(t, 0, 99, Utf16), 2);
    }
}
