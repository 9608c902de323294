//! The JSON-RPC messages of LSP, parsed once per frame: a [`Message`] is a request, a
//! response or a notification (rust-analyzer's lsp-server and helix-lsp have the same three),
//! with its [`RequestId`] an integer or a string. A body that is not JSON, or JSON that is
//! none of the three, is a [`NotMessage`] naming what it could answer ([`Blame`]), so that the
//! request waiting for it fails at once instead of timing out.
//!
//! Outgoing messages are written as before this type existed: each body is a
//! `serde_json::Value` printed with its keys in order, so the frames (and the traces that
//! record them) are the same bytes.

use super::transport::FrameError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// A request's id: the protocol allows an integer or a string. lanser numbers its own.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Int(i64),
    Str(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Int(n) => write!(f, "{n}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// One LSP message, in either direction.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Response(Response),
    Notification(Notification),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: RequestId,
    pub method: String,
    /// `null` when the message has none.
    pub params: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: RequestId,
    pub result: Result<Value, ResponseError>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    /// `null` when the message has none.
    pub params: Value,
}

/// A response's `error` member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// JSON-RPC error codes lanser sends or reads.
pub mod code {
    pub const INVALID_PARAMS: i64 = -32602;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const REQUEST_CANCELLED: i64 = -32800;
    pub const CONTENT_MODIFIED: i64 = -32801;
}

/// Which of lanser's requests a frame that is not a message could have answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blame {
    /// It names this id: a reply gone wrong.
    One(RequestId),
    /// It names none (not JSON, or no usable id): any request waiting.
    All,
    /// It is the server's own request or notification, not a reply.
    None,
}

/// A frame body that is not an LSP message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct NotMessage {
    pub reason: String,
    pub blame: Blame,
}

impl Message {
    /// Parse one frame body.
    pub fn parse(body: &str) -> Result<Message, FrameError> {
        let value: Value = serde_json::from_str(body).map_err(FrameError::BadJson)?;
        Message::from_value(value).map_err(FrameError::NotMessage)
    }

    fn from_value(value: Value) -> Result<Message, NotMessage> {
        let Value::Object(mut m) = value else {
            return Err(not("the body is not a JSON object", Blame::All));
        };
        let id = m.remove("id");
        let params = m.remove("params").unwrap_or(Value::Null);
        if let Some(method) = m.remove("method") {
            let Value::String(method) = method else {
                return Err(not("its method is not a string", Blame::None));
            };
            return match id {
                None => Ok(Message::Notification(Notification { method, params })),
                Some(id) => match serde_json::from_value(id) {
                    Ok(id) => Ok(Message::Request(Request { id, method, params })),
                    Err(_) => Err(not(
                        &format!(
                            "request {method} has an id that is neither a number nor a string"
                        ),
                        Blame::None,
                    )),
                },
            };
        }
        let id: RequestId = match id.map(serde_json::from_value) {
            Some(Ok(id)) => id,
            Some(Err(_)) => {
                return Err(not(
                    "a response whose id is neither a number nor a string",
                    Blame::All,
                ))
            }
            None => return Err(not("neither a method nor an id", Blame::All)),
        };
        let result =
            response_result(&mut m).map_err(|reason| not(reason, Blame::One(id.clone())))?;
        Ok(Message::Response(Response { id, result }))
    }

    /// The frame body, keys in order (as lanser has always written them).
    pub fn to_body(&self) -> String {
        let body = match self {
            Message::Request(r) => {
                json!({"jsonrpc": "2.0", "id": r.id, "method": r.method, "params": r.params})
            }
            Message::Notification(n) => {
                json!({"jsonrpc": "2.0", "method": n.method, "params": n.params})
            }
            Message::Response(r) => match &r.result {
                Ok(result) => json!({"jsonrpc": "2.0", "id": r.id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": r.id, "error": error}),
            },
        };
        body.to_string()
    }
}

/// The outcome a response carries: its `error` (a null one is none), else its `result`.
fn response_result(
    m: &mut Map<String, Value>,
) -> Result<Result<Value, ResponseError>, &'static str> {
    match m.remove("error").filter(|e| !e.is_null()) {
        Some(error) => match serde_json::from_value(error) {
            Ok(error) => Ok(Err(error)),
            Err(_) => Err("a response whose error has no numeric code and message"),
        },
        None => match m.remove("result") {
            Some(result) => Ok(Ok(result)),
            None => Err("a response with neither result nor error"),
        },
    }
}

fn not(reason: &str, blame: Blame) -> NotMessage {
    NotMessage {
        reason: reason.to_string(),
        blame,
    }
}

/// A typed value as JSON params, with absent optional members left out: lsp-types writes
/// some as `null` (a pull's `identifier`, `previousResultId`), the protocol omits them.
pub fn params_of<T: Serialize>(params: T) -> serde_json::Result<Value> {
    let mut params = serde_json::to_value(params)?;
    if let Value::Object(members) = &mut params {
        members.retain(|_, v| !v.is_null());
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<Message, FrameError> {
        Message::parse(body)
    }

    #[test]
    fn the_three_kinds_and_both_id_types() {
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":7,"method":"workspace/configuration","params":{"items":[]}}"#).unwrap(),
            Message::Request(Request {
                id: RequestId::Int(7),
                method: "workspace/configuration".into(),
                params: json!({"items": []}),
            })
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":"a1","result":null}"#).unwrap(),
            Message::Response(Response {
                id: RequestId::Str("a1".into()),
                result: Ok(Value::Null)
            })
        );
        assert_eq!(
            parse(r#"{"id":3,"error":{"code":-32801,"message":"content modified"}}"#).unwrap(),
            Message::Response(Response {
                id: RequestId::Int(3),
                result: Err(ResponseError {
                    code: -32801,
                    message: "content modified".into(),
                    data: None
                })
            })
        );
        // A null error is no error (some servers write both members).
        assert!(matches!(
            parse(r#"{"id":3,"result":[1],"error":null}"#).unwrap(),
            Message::Response(Response { result: Ok(_), .. })
        ));
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"$/progress"}"#).unwrap(),
            Message::Notification(Notification {
                method: "$/progress".into(),
                params: Value::Null
            })
        );
    }

    #[test]
    fn what_is_not_a_message_says_which_request_it_could_answer() {
        let blame = |body: &str| parse(body).unwrap_err().blame();
        assert_eq!(blame("Content-Length: 3"), Blame::All);
        assert!(matches!(parse("{\"id\": 1, "), Err(FrameError::BadJson(_))));
        assert_eq!(blame("[1, 2]"), Blame::All);
        assert_eq!(blame(r#"{"jsonrpc":"2.0"}"#), Blame::All);
        assert_eq!(blame(r#"{"id":4}"#), Blame::One(RequestId::Int(4)));
        assert_eq!(
            blame(r#"{"id":4,"error":{"message":"no code"}}"#),
            Blame::One(RequestId::Int(4))
        );
        assert_eq!(blame(r#"{"id":1.5,"result":1}"#), Blame::All);
        assert_eq!(blame(r#"{"id":{},"method":"x"}"#), Blame::None);
        assert_eq!(blame(r#"{"method":5}"#), Blame::None);
        let e = parse(r#"{"id":4}"#).unwrap_err();
        assert_eq!(e.to_string(), "frame is not an LSP message");
        assert_eq!(
            crate::error::chain(&e),
            "frame is not an LSP message: a response with neither result nor error"
        );
    }

    #[test]
    fn bodies_are_written_with_their_keys_in_order() {
        let req = Message::Request(Request {
            id: RequestId::Int(2),
            method: "shutdown".into(),
            params: Value::Null,
        });
        assert_eq!(
            req.to_body(),
            r#"{"id":2,"jsonrpc":"2.0","method":"shutdown","params":null}"#
        );
        let refused = Message::Response(Response {
            id: RequestId::Str("x".into()),
            result: Err(ResponseError {
                code: code::METHOD_NOT_FOUND,
                message: "Unhandled method m".into(),
                data: None,
            }),
        });
        assert_eq!(
            refused.to_body(),
            r#"{"error":{"code":-32601,"message":"Unhandled method m"},"id":"x","jsonrpc":"2.0"}"#
        );
        for body in [req.to_body(), refused.to_body()] {
            assert_eq!(Message::parse(&body).unwrap().to_body(), body);
        }
    }
}
