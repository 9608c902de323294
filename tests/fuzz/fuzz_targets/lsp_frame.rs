//! LSP framing over arbitrary bytes from a "server": `read_frame` never panics, aborts or
//! allocates more than the bytes it was given, always ends (the stream is finite), every
//! frame it returns survives `write_frame` → `read_frame` unchanged, and a body that parses as
//! a message writes back as the same message
//! (`cargo +nightly fuzz run lsp_frame`).
#![no_main]

use lanser::lsp::message::Message;
use lanser::lsp::transport::{read_frame, write_frame, FrameError};
use libfuzzer_sys::fuzz_target;
use std::future::Future;
use std::task::{Context, Poll, Waker};

/// Run a future over in-memory streams, which never wait.
fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("an in-memory stream made the reader wait"),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut reader = data;
    let mut frames = 0;
    loop {
        match ready(read_frame(&mut reader)) {
            Ok(body) => {
                frames += 1;
                assert!(frames <= data.len(), "more frames than input bytes");
                // What the reader task does with a body: one parse, into a message or an
                // error naming the requests it could have answered (never a panic).
                let text = String::from_utf8_lossy(&body);
                if let Ok(msg) = Message::parse(&text) {
                    // A parsed message writes back as one that parses to the same message.
                    assert_eq!(Message::parse(&msg.to_body()).expect("own body parses"), msg);
                }
                let mut framed = Vec::new();
                ready(write_frame(&mut framed, &text)).expect("write to memory");
                let mut again = &framed[..];
                assert_eq!(
                    ready(read_frame(&mut again)).expect("own frame reads back"),
                    text.as_bytes()
                );
                assert!(matches!(
                    ready(read_frame(&mut again)),
                    Err(FrameError::Closed)
                ));
            }
            Err(FrameError::Closed) => {
                assert!(reader.is_empty());
                break;
            }
            Err(_) => break,
        }
    }
});
