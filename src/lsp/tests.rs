//! A session against an in-process server that misbehaves on cue: a frame that is not JSON,
//! a reply that is not a message, a request lanser does not know, and a normal answer after
//! all of them.

use super::message::{Message, Request as RpcRequest, RequestId};
use super::session::{Session, SessionConfig};
use super::transport::{read_frame, write_frame};
use crate::error::ErrorCode;
use crate::languages::{Quirks, Ready};
use lsp_types::request::{GotoDefinition, HoverRequest, Initialize, Request};
use lsp_types::{GotoDefinitionParams, HoverParams};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};

fn config() -> SessionConfig {
    SessionConfig {
        command: Vec::new(),
        cwd: "/".into(),
        root: "/w".into(),
        root_uri: "file:///w".into(),
        settings: json!({"python": {"pythonPath": "/p"}}),
        // Long: a request that fails must fail on the frame, not on the clock.
        request_timeout: Duration::from_secs(60),
        tap: None,
        ready: Ready::Initialized,
        expect_index: false,
        ready_log: None,
        language_id: None,
        encodings: vec!["utf-16"],
        quirks: Quirks::NONE,
        file_types: Vec::new(),
        init_options: Value::Null,
    }
}

/// The server: answers initialize, then each hover with a body that is not JSON, each
/// definition first with a request of its own lanser must refuse, then with a reply that has
/// neither result nor error; `shutdown` normally. What lanser answered to its request goes
/// back on `refused`.
async fn serve(
    stream: tokio::io::DuplexStream,
    refused: tokio::sync::mpsc::UnboundedSender<Value>,
) {
    let (read, mut write) = tokio::io::split(stream);
    let mut reader = BufReader::new(read);
    while let Ok(body) = read_frame(&mut reader).await {
        let msg = Message::parse(&String::from_utf8_lossy(&body)).expect("lanser sends messages");
        let (id, method) = match msg {
            Message::Request(RpcRequest { id, method, .. }) => (id, method),
            Message::Response(r) => {
                let _ = refused.send(json!({"id": r.id, "error": r.result.err().map(|e| e.code)}));
                continue;
            }
            Message::Notification(_) => continue,
        };
        let reply = match method.as_str() {
            m if m == Initialize::METHOD => json!({"jsonrpc": "2.0", "id": id, "result": {
                "capabilities": {"hoverProvider": true, "completionProvider": 7},
                "serverInfo": {"name": "faulty"}}})
            .to_string(),
            m if m == HoverRequest::METHOD => "{\"jsonrpc\": \"2.0\", \"id\": ".to_string(),
            m if m == GotoDefinition::METHOD => {
                let ask = json!({"jsonrpc": "2.0", "id": "s1", "method": "custom/unknown"});
                write_frame(&mut write, &ask.to_string()).await.unwrap();
                json!({"jsonrpc": "2.0", "id": id}).to_string()
            }
            _ => json!({"jsonrpc": "2.0", "id": id, "result": null}).to_string(),
        };
        write_frame(&mut write, &reply).await.unwrap();
    }
    let _ = write.shutdown().await;
}

fn position() -> lsp_types::TextDocumentPositionParams {
    super::typed::position("file:///w/a.py", 0, 0).unwrap()
}

#[tokio::test]
async fn a_malformed_frame_fails_the_request_it_could_answer_and_the_session_goes_on() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (_stderr_ours, stderr_theirs) = tokio::io::duplex(64);
    let (refused_tx, mut refused) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(serve(theirs, refused_tx));
    let (read, write) = tokio::io::split(ours);
    let session = Session::over(
        config(),
        (Box::new(write), Box::new(read), Box::new(stderr_theirs)),
    )
    .await
    .unwrap();
    // Typed capabilities: the member that is not the protocol's shape is left out.
    assert!(session.supports(super::capabilities::Feature::Hover));
    assert!(!session.supports(super::capabilities::Feature::Completion));
    assert_eq!(session.raw_capabilities()["completionProvider"], json!(7));
    assert_eq!(session.server_info().0.as_deref(), Some("faulty"));

    let hover = HoverParams {
        text_document_position_params: position(),
        work_done_progress_params: Default::default(),
    };
    let e = session.request::<HoverRequest>(hover).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::LsCrash, "{e}");
    assert_eq!(
        e.message,
        "language server sent a malformed frame during textDocument/hover"
    );
    let causes = e.causes();
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert_eq!(causes[0], "frame body is not JSON");
    assert!(causes[1].starts_with("EOF while parsing"), "{causes:?}");

    let def = GotoDefinitionParams {
        text_document_position_params: position(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let e = session.request::<GotoDefinition>(def).await.unwrap_err();
    assert_eq!(
        e.message,
        "language server sent a malformed frame during textDocument/definition"
    );
    assert_eq!(
        e.causes(),
        [
            "frame is not an LSP message",
            "a response with neither result nor error"
        ]
    );
    // Its own request was answered MethodNotFound, under its string id.
    assert_eq!(
        refused.recv().await.unwrap(),
        json!({"id": RequestId::Str("s1".into()), "error": -32601})
    );
    // The stream goes on: the next request is answered.
    let symbols = lsp_types::DocumentSymbolParams {
        text_document: super::typed::document("file:///w/a.py").unwrap(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let answer = session
        .request::<lsp_types::request::DocumentSymbolRequest>(symbols)
        .await
        .unwrap();
    assert_eq!(answer, None);
    assert!(!session.is_closed());
    session.shutdown().await;
}

/// The served settings go into `initializationOptions.settings` over the built-in's, where
/// the built-in has that member (jdtls), and a Gradle root with jdtls's Gradle import off is
/// known not to be imported.
#[test]
fn settings_join_the_initialization_options_and_gradle_off_is_known() {
    let mut c = config();
    c.init_options = json!({"settings": {"java": {"import": {"gradle": {"enabled": false}}}}});
    c.settings = json!({"java": {"configuration": {"maven": {"userSettings": "/s.xml"}}}});
    let params = super::capabilities::initialize_params(&c);
    let java = &params["initializationOptions"]["settings"]["java"];
    assert_eq!(java["import"]["gradle"]["enabled"], false);
    assert_eq!(java["configuration"]["maven"]["userSettings"], "/s.xml");
    let root = tempfile::tempdir().unwrap();
    let not = |p: &Value| super::capabilities::build_not_imported(p, root.path());
    assert_eq!(not(&params), None);
    std::fs::write(root.path().join("build.gradle"), "").unwrap();
    assert!(not(&params).is_some_and(|w| w.contains("Gradle import is off")));
    c.settings = json!({"java": {"import": {"gradle": {"enabled": true}}}});
    assert_eq!(not(&super::capabilities::initialize_params(&c)), None);
    std::fs::write(root.path().join("pom.xml"), "").unwrap();
    assert_eq!(not(&params), None);
}
