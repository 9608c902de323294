//! JSON-RPC framing over a child process's stdio: `Content-Length` frames in, out, and a
//! drained stderr (helix's three-task shape). Each frame read is parsed once, into a
//! [`Message`]; one that is not a message is [`Incoming::Malformed`] and the stream goes on.
//!
//! Reading is tolerant: lines that are not headers are skipped, since servers print stray text
//! to stdout. Every frame, in either direction, goes past an optional [`Tap`] (zed's `on_io`),
//! the hook the trace recorder uses, and so does the end of the server's stdout
//! ([`Tapped::End`]) with the stderr tail kept at that moment.
//!
//! When stdout ends, the reader waits (briefly) for stderr to end too, then freezes the stderr
//! tail: a crash message quotes the server's last stderr lines ([`excerpt`]), and they must be
//! the same whichever of the two pipes lanser happened to read first (and the ones the trace
//! records).

use super::message::{Blame, Message, NotMessage};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::sync::mpsc;

/// Direction of a frame, for the tap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// lanser → server.
    Send,
    /// server → lanser.
    Recv,
}

/// What the [`Tap`] sees.
pub enum Tapped<'a> {
    /// A raw frame body.
    Frame(Dir, &'a str),
    /// The server's stdout ended: `error` is why when it was not a plain close, `stderr` the
    /// tail of stderr lanser keeps (and quotes) from then on.
    End {
        error: Option<&'a FrameError>,
        stderr: &'a [String],
    },
}

/// Sees every raw frame body, and the end of the stream.
pub type Tap = Arc<dyn Fn(Tapped<'_>) + Send + Sync>;

/// How many stderr lines are kept for error messages.
const STDERR_TAIL: usize = 20;
/// How long, once stdout has closed, lanser waits for stderr to close before it freezes the
/// stderr tail (a process that exits closes both at once).
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// The last lines of the server's stderr; frozen once stdout has ended.
#[derive(Default)]
pub struct StderrTail {
    lines: VecDeque<String>,
    frozen: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("stream closed")]
    Closed,
    #[error("bad Content-Length header: {0}")]
    BadLength(String),
    #[error("frame body is not JSON")]
    BadJson(#[source] serde_json::Error),
    #[error("frame is not an LSP message")]
    NotMessage(#[source] NotMessage),
    #[error("i/o error")]
    Io(#[from] std::io::Error),
}

impl FrameError {
    /// Which of lanser's requests a malformed frame could have answered.
    pub fn blame(&self) -> Blame {
        match self {
            FrameError::NotMessage(m) => m.blame.clone(),
            _ => Blame::All,
        }
    }
}

/// What the reader hands on, frame by frame.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame whose body is not an LSP message ([`FrameError::BadJson`],
    /// [`FrameError::NotMessage`]); the stream goes on.
    Malformed(FrameError),
    /// The stream ended, and why.
    End(FrameError),
}

/// Read one frame body. Non-header lines before the headers are skipped.
pub async fn read_frame<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Vec<u8>, FrameError> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Err(FrameError::Closed);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if let Some(len) = length {
                // Grown as the bytes arrive: a header claiming terabytes costs nothing until
                // they come (a buffer of `len` zeros up front aborted lanser).
                let mut body = Vec::new();
                (&mut *reader)
                    .take(len as u64)
                    .read_to_end(&mut body)
                    .await?;
                if body.len() < len {
                    // What `read_exact` said before: traces record this text.
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "early eof",
                    )
                    .into());
                }
                return Ok(body);
            }
            continue;
        }
        // Stray output may share a line with the header that follows it.
        let lower = text.to_ascii_lowercase();
        if let Some(i) = lower.find("content-length:") {
            let value = text[i + "content-length:".len()..].trim();
            length = Some(
                value
                    .parse()
                    .map_err(|_| FrameError::BadLength(value.to_string()))?,
            );
        }
        // Other headers (Content-Type) and non-header noise are ignored.
    }
}

/// Write one frame.
pub async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, body: &str) -> std::io::Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    writer.write_all(header.as_bytes()).await?;
    writer.write_all(body.as_bytes()).await?;
    writer.flush().await
}

/// The running IO tasks of one server process.
pub struct Transport {
    pub outgoing: mpsc::UnboundedSender<Message>,
    pub stderr_tail: Arc<Mutex<StderrTail>>,
}

impl Transport {
    /// Start the writer task (fed by `outgoing`), the stderr task, and a reader task that hands
    /// each frame, parsed, to `on_message`, then, once, why the stream ended.
    pub fn start<W, R, E, F>(
        stdin: W,
        stdout: R,
        stderr: E,
        tap: Option<Tap>,
        outgoing: (
            mpsc::UnboundedSender<Message>,
            mpsc::UnboundedReceiver<Message>,
        ),
        mut on_message: F,
    ) -> Transport
    where
        W: AsyncWrite + Unpin + Send + 'static,
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        E: tokio::io::AsyncRead + Unpin + Send + 'static,
        F: FnMut(Incoming) + Send + 'static,
    {
        let (tx, mut rx) = outgoing;
        let write_tap = tap.clone();
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(msg) = rx.recv().await {
                let body = msg.to_body();
                if let Some(t) = &write_tap {
                    t(Tapped::Frame(Dir::Send, &body));
                }
                if write_frame(&mut stdin, &body).await.is_err() {
                    break;
                }
            }
        });

        let stderr_tail = Arc::new(Mutex::new(StderrTail::default()));
        let tail = stderr_tail.clone();
        // Dropped when stderr ends.
        let (stderr_open, stderr_ended) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _open = stderr_open;
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                if t.frozen {
                    continue;
                }
                if t.lines.len() == STDERR_TAIL {
                    t.lines.pop_front();
                }
                t.lines.push_back(line);
            }
        });

        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            loop {
                match read_frame(&mut reader).await {
                    Ok(body) => {
                        let text = String::from_utf8_lossy(&body);
                        if let Some(t) = &tap {
                            t(Tapped::Frame(Dir::Recv, &text));
                        }
                        on_message(match Message::parse(&text) {
                            Ok(m) => Incoming::Message(m),
                            Err(e) => Incoming::Malformed(e),
                        });
                    }
                    Err(e) => {
                        if matches!(e, FrameError::Closed) {
                            let _ = tokio::time::timeout(STDERR_DRAIN, stderr_ended).await;
                        }
                        let kept: Vec<String> = {
                            let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                            t.frozen = true;
                            t.lines.iter().cloned().collect()
                        };
                        if let Some(t) = &tap {
                            let error = (!matches!(e, FrameError::Closed)).then_some(&e);
                            t(Tapped::End {
                                error,
                                stderr: &kept,
                            });
                        }
                        on_message(Incoming::End(e));
                        break;
                    }
                }
            }
        });

        Transport {
            outgoing: tx,
            stderr_tail,
        }
    }

    /// The server's last words on stderr, for a crash message: see [`excerpt`].
    pub fn stderr_excerpt(&self) -> Option<String> {
        let t = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        excerpt(t.lines.iter().map(String::as_str))
    }
}

/// How many stderr lines a crash message quotes.
const CRASH_LINES: usize = 3;

/// The last [`CRASH_LINES`] non-empty lines of `lines`, on one line (` | ` between them),
/// without stack traces: a Rust backtrace (from `stack backtrace:` on) and stack frames
/// (`  12: name`, `    at f (file.js:1:2)`) bury the reason, as rustup's proxy without its
/// component does: its `error: Unknown binary …`, then a backtrace ending in `15: <unknown>`.
pub fn excerpt<'a>(lines: impl Iterator<Item = &'a str>) -> Option<String> {
    let frame = |l: &str| {
        let t = l.trim_start();
        let indented = t.len() < l.len();
        let numbered = t
            .split_once(':')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        indented && (t.starts_with("at ") || numbered)
    };
    let kept: Vec<&str> = lines
        .take_while(|l| !l.trim().eq_ignore_ascii_case("stack backtrace:"))
        .filter(|l| !l.trim().is_empty() && !frame(l))
        .collect();
    let last = &kept[kept.len().saturating_sub(CRASH_LINES)..];
    (!last.is_empty()).then(|| {
        last.iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" | ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn skips_stray_stdout_and_reads_frames() {
        let input = b"hello from the server\nnoiseContent-Length: 2\r\n\r\n{}Content-Length: 7\r\nContent-Type: x\r\n\r\n[1,2,3]";
        let mut r = BufReader::new(&input[..]);
        assert_eq!(read_frame(&mut r).await.unwrap(), b"{}");
        assert_eq!(read_frame(&mut r).await.unwrap(), b"[1,2,3]");
        assert!(matches!(read_frame(&mut r).await, Err(FrameError::Closed)));
    }

    #[test]
    fn a_crash_excerpt_keeps_the_reason_and_drops_stack_traces() {
        let rustup = "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.\n\nStack backtrace:\n   0: anyhow::kind::Adhoc::new\n  15: <unknown>";
        assert_eq!(
            excerpt(rustup.lines()).as_deref(),
            Some("error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.")
        );
        let node = "file:///x.js:3\nError: Cannot find module 'y'\n    at Module._resolveFilename (node:internal:1:2)\n    at f (x.js:3:1)\n\nNode.js v20.20.2";
        assert_eq!(
            excerpt(node.lines()).as_deref(),
            Some("file:///x.js:3 | Error: Cannot find module 'y' | Node.js v20.20.2")
        );
        assert_eq!(
            excerpt(["a", "b", "c", "d"].into_iter()).as_deref(),
            Some("b | c | d")
        );
        assert_eq!(
            excerpt(["fake-lsp: simulated crash"].into_iter()).as_deref(),
            Some("fake-lsp: simulated crash")
        );
        assert_eq!(excerpt(["", "  "].into_iter()), None);
    }

    #[tokio::test]
    async fn bad_length_is_an_error() {
        let input = b"Content-Length: nope\r\n\r\n";
        let mut r = BufReader::new(&input[..]);
        assert!(matches!(
            read_frame(&mut r).await,
            Err(FrameError::BadLength(_))
        ));
    }

    /// Fuzz find (lsp_frame): a length far beyond the stream aborted the process while
    /// allocating the body; now it is the same early-eof error as any short body.
    #[tokio::test]
    async fn huge_content_length_is_an_early_eof_not_an_abort() {
        let input = b"Content-Length: 43777777777777\r\n\r\n{\"id\": 7}";
        let mut r = BufReader::new(&input[..]);
        match read_frame(&mut r).await {
            Err(FrameError::Io(e)) => {
                assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
                assert_eq!(e.to_string(), "early eof");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn write_then_read_round_trip() {
        let mut buf = Vec::new();
        write_frame(&mut buf, "{\"a\":\"é\"}").await.unwrap();
        let mut r = BufReader::new(&buf[..]);
        assert_eq!(
            read_frame(&mut r).await.unwrap(),
            "{\"a\":\"é\"}".as_bytes()
        );
    }
}
