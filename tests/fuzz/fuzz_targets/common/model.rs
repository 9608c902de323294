//! Naive models of lanser's text coordinates, written independently of `lanser::text` for the
//! targets to check it against: lines split at `\n`, `\r\n` and a lone `\r` (as in LSP), and
//! columns counted in utf-8 bytes, utf-16 units or code points.
#![allow(dead_code)]

use lanser::text::Encoding;

/// (start, content end) byte offsets of every line; a final terminator opens an empty line.
pub fn lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (i, c) = chars[k];
        if c == '\n' || c == '\r' {
            out.push((start, i));
            let crlf = c == '\r' && chars.get(k + 1).map(|p| p.1) == Some('\n');
            let step = if crlf { 2 } else { 1 };
            k += step;
            start = i + step;
            continue;
        }
        k += 1;
    }
    out.push((start, text.len()));
    out
}

/// Width of one character in `enc` units.
pub fn width(enc: Encoding, c: char) -> usize {
    match enc {
        Encoding::Utf8 => c.to_string().len(),
        Encoding::Utf16 => c.encode_utf16(&mut [0; 2]).len(),
        Encoding::Codepoint => 1,
    }
}

/// Width of a string in `enc` units.
pub fn units(enc: Encoding, s: &str) -> usize {
    s.chars().map(|c| width(enc, c)).sum()
}

/// The byte offset of 0-based (line, col), when it names a character boundary on the line
/// (the end of its content included).
pub fn offset(text: &str, line: u64, col: u64, enc: Encoding) -> Option<usize> {
    let all = lines(text);
    let &(s, e) = all.get(usize::try_from(line).ok()?)?;
    let content = &text[s..e];
    content
        .char_indices()
        .map(|(i, _)| i)
        .chain([content.len()])
        .find(|&i| units(enc, &content[..i]) as u64 == col)
        .map(|i| s + i)
}
