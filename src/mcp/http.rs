//! `lanser mcp --http ADDR`: the same MCP server over streamable HTTP (rmcp's own server
//! transport, served by hyper) at `http://ADDR/mcp`, until interrupted. Every client that
//! initializes gets its own MCP session; all of them share one [`Server`], so one answerer
//! and the workspace's one warm daemon.
//!
//! Loopback by default (`:PORT` means `127.0.0.1:PORT`); any other address is refused unless
//! a token is given, and with a token every request must carry `Authorization: Bearer TOKEN`
//! (compared in constant time) or is answered 401. The bound address is printed on stderr,
//! so that port 0 can be used and the real port read back.

use super::Server;
use crate::error::{LanserError, Result};
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use std::convert::Infallible;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

type Body = BoxBody<Bytes, Infallible>;

/// Where to listen, and the token requests must carry (if any).
#[derive(Debug)]
pub struct Bind {
    pub addr: SocketAddr,
    token: Option<String>,
}

impl Bind {
    /// `--http ADDR` with the token from `--token` or `LANSER_MCP_TOKEN` (empty = none): a
    /// usage error (exit 2) for an address that does not parse, or that is not loopback
    /// while no token is given.
    pub fn parse(spec: &str, token: Option<String>) -> Result<Bind> {
        let token = token.filter(|t| !t.is_empty());
        let full = match spec.strip_prefix(':') {
            Some(port) => format!("127.0.0.1:{port}"),
            None => spec.to_string(),
        };
        let addr = full
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                LanserError::usage(format!(
                    "--http {spec}: not an address to listen on (HOST:PORT, or :PORT for loopback)"
                ))
            })?;
        if !addr.ip().is_loopback() && token.is_none() {
            return Err(LanserError::usage(format!(
                "--http {spec} is not a loopback address: serving it needs --token TOKEN (or \
                 LANSER_MCP_TOKEN), which every request must then carry"
            )));
        }
        Ok(Bind { addr, token })
    }
}

/// Serve `server` at `bind` until SIGINT or SIGTERM.
pub async fn serve(server: Server, bind: Bind) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(bind.addr)
        .await
        .map_err(|e| {
            LanserError::internal(format!("mcp --http {}: cannot listen", bind.addr)).with_source(e)
        })?;
    let local = listener
        .local_addr()
        .map_err(|e| LanserError::internal("mcp --http: no local address").with_source(e))?;
    let mut config = StreamableHttpServerConfig::default();
    if !local.ip().is_loopback() {
        // Reached under names lanser cannot know (a container's host alias, a LAN name); the
        // token, not the Host header, is what keeps other callers (and DNS rebinding) out.
        config = config.disable_allowed_hosts();
    }
    let stop = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate = Arc::new(Gate {
        token: bind.token.as_deref().map(digest),
        service,
    });
    eprintln!("lanser mcp: serving MCP (streamable HTTP) at http://{local}{ENDPOINT}");
    let interrupted = interrupted();
    tokio::pin!(interrupted);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors or a connection reset before it was taken: the next one.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut interrupted => break,
        };
        let gate = gate.clone();
        let svc = hyper::service::service_fn(move |req| {
            let gate = gate.clone();
            async move { Ok::<_, Infallible>(gate.respond(req).await) }
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
    stop.cancel();
    Ok(())
}

/// What stands before the MCP service: the token check and the one endpoint.
struct Gate {
    /// SHA-256 of the token, when one is required.
    token: Option<[u8; 32]>,
    service: StreamableHttpService<Server, LocalSessionManager>,
}

impl Gate {
    async fn respond(&self, req: Request<Incoming>) -> Response<Body> {
        if let Some(want) = &self.token {
            if !authorized(req.headers(), want) {
                let mut r = plain(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized: send Authorization: Bearer TOKEN\n",
                );
                r.headers_mut()
                    .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return r;
            }
        }
        if req.uri().path() != ENDPOINT {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint is /mcp\n",
            );
        }
        self.service.handle(req).await
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn digest(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
}

/// Whether the request's `Authorization: Bearer …` is the token whose digest is `want`. The
/// digests are compared, in constant time: the time taken says nothing about how much of the
/// token was right, nor (digests being one length) how long it is. A missing header is
/// compared as an empty token, so it takes the same time too.
fn authorized(headers: &HeaderMap, want: &[u8; 32]) -> bool {
    let given = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map_or("", |(_, token)| token.trim());
    bool::from(digest(given).ct_eq(want)) && !given.is_empty()
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM; never if signals cannot be watched.
async fn interrupted() {
    #[cfg(unix)]
    let term = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    let int = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = term => {}
        _ = int => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_port_alone_is_loopback_and_other_addresses_need_a_token() {
        let b = Bind::parse(":0", None).unwrap();
        assert_eq!(b.addr, "127.0.0.1:0".parse().unwrap());
        assert!(Bind::parse("[::1]:8765", None).is_ok());
        for spec in ["0.0.0.0:0", "192.0.2.1:80"] {
            let e = Bind::parse(spec, None).unwrap_err();
            assert_eq!(e.code, ErrorCode::Usage, "{spec}");
            assert!(Bind::parse(spec, Some(String::new())).is_err(), "{spec}");
            assert!(Bind::parse(spec, Some("t".into())).is_ok(), "{spec}");
        }
        let e = Bind::parse("nowhere", None).unwrap_err();
        assert_eq!(e.code, ErrorCode::Usage);
    }

    #[test]
    fn only_the_bearer_token_is_authorized() {
        let want = digest("s3cret");
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
            authorized(&h, &want)
        };
        assert!(with("Bearer s3cret"));
        assert!(with("bearer s3cret"));
        assert!(!with("Bearer s3cre"));
        assert!(!with("Bearer s3crett"));
        assert!(!with("Basic s3cret"));
        assert!(!with("s3cret"));
        assert!(!authorized(&HeaderMap::new(), &want));
        assert!(!authorized(&HeaderMap::new(), &digest("")));
    }
}
