//! Typed request parameters built from lanser's own values (a file URI, a server position),
//! and the way back from a typed answer to the JSON the normalizer reads (the same normalizer
//! reads `lanser request`'s verbatim answers, so there is one reading of each shape).

use crate::document::Document;
use crate::error::{LanserError, Result};
use crate::text::Encoding;
use crate::workspace::path_to_uri;
use lsp_types::{Position, TextDocumentIdentifier, TextDocumentPositionParams, Uri};
use serde::Serialize;
use serde_json::Value;
use std::str::FromStr;

/// A `file://` URI lanser built (percent-encoded, so it always parses) as the protocol's type.
pub fn uri(s: &str) -> Result<Uri> {
    Uri::from_str(s).map_err(|e| LanserError::internal(format!("{s} is not a URI")).with_source(e))
}

/// `{"textDocument": {"uri": …}}`.
pub fn document(uri_str: &str) -> Result<TextDocumentIdentifier> {
    Ok(TextDocumentIdentifier { uri: uri(uri_str)? })
}

/// `{"textDocument": {"uri": …}, "position": {"line": …, "character": …}}`.
pub fn position(uri_str: &str, line: u32, character: u32) -> Result<TextDocumentPositionParams> {
    Ok(TextDocumentPositionParams {
        text_document: document(uri_str)?,
        position: Position { line, character },
    })
}

/// The position at byte `offset` of `doc`, in the server's column unit `enc`.
pub fn at(doc: &Document, offset: usize, enc: Encoding) -> Result<TextDocumentPositionParams> {
    let (line, character) = doc.position(offset, enc);
    position(&path_to_uri(&doc.abs), line as u32, character as u32)
}

/// A typed answer as JSON, for the normalizer.
pub fn json<T: Serialize>(answer: &T) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_serialize_as_the_protocol_spells_them() {
        let p = position("file:///w/a%20b.py", 3, 7).unwrap();
        assert_eq!(
            json(&p),
            serde_json::json!({"textDocument": {"uri": "file:///w/a%20b.py"},
                               "position": {"line": 3, "character": 7}})
        );
        assert!(uri("not a uri").is_err());
    }
}
