//! Writing a trace while lanser runs (`--trace-file`): the header, the snapshot's files and
//! the inputs read so far first, then every JSON-RPC frame and the end of the server's stream
//! as the transport's [`Tap`] sees them, every later input as it is read, and each
//! operation's bundle as it is printed.

use super::{
    snapshot_files, tokenize_root, workspace_digest, EndError, EofRec, FileRec, Header, InputRec,
    OpRec,
};
use crate::bundle::{Bundle, Environment};
use crate::error::{ErrorCode, LanserError, Result};
use crate::lsp::transport::{Dir, FrameError, Tap, Tapped};
use crate::orchestrator::{Options, Orchestrator};
use crate::workspace::Workspace;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

struct State {
    out: BufWriter<File>,
    seq: u64,
    ops: usize,
    /// The first write failure; reported by [`Recorder::finish`].
    error: Option<Arc<std::io::Error>>,
}

/// For `--trace-file`: a recorder for the workspace `opts` names, its tap installed in `opts`.
pub fn begin(trace_file: Option<&Path>, opts: &mut Options) -> Result<Option<Recorder>> {
    let Some(path) = trace_file else {
        return Ok(None);
    };
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    let rec = Recorder::create(path, &ws.root)?;
    opts.tap = Some(rec.tap());
    Ok(Some(rec))
}

/// A trace being written. Cheap to clone; all clones write the same file.
#[derive(Clone)]
pub struct Recorder {
    state: Arc<Mutex<State>>,
    root: Arc<PathBuf>,
    path: Arc<PathBuf>,
}

impl Recorder {
    /// Create (truncate) the trace file for a run over the workspace at `root`.
    pub fn create(path: &Path, root: &Path) -> Result<Recorder> {
        let file = File::create(path).map_err(|e| {
            let code = match e.kind() {
                std::io::ErrorKind::PermissionDenied => ErrorCode::FsPermissions,
                _ => ErrorCode::NotFound,
            };
            LanserError::new(code, format!("cannot write trace file {}", path.display()))
                .with_source(e)
        })?;
        Ok(Recorder {
            state: Arc::new(Mutex::new(State {
                out: BufWriter::new(file),
                seq: 0,
                ops: 0,
                error: None,
            })),
            root: Arc::new(root.to_path_buf()),
            path: Arc::new(path.to_path_buf()),
        })
    }

    fn write_line(&self, line: &str) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.error.is_some() {
            return;
        }
        if let Err(e) = st
            .out
            .write_all(line.as_bytes())
            .and_then(|_| st.out.write_all(b"\n"))
        {
            st.error = Some(Arc::new(e));
        }
    }

    /// The header and one `file` record per snapshot file.
    pub fn header(
        &self,
        argv: Vec<String>,
        ws: &Workspace,
        cwd: &Path,
        env: &Environment,
        sources: bool,
    ) {
        let files: Vec<FileRec> = snapshot_files(ws)
            .into_iter()
            .map(|(path, bytes)| FileRec {
                digest: crate::digest::sha256_tagged(&bytes),
                content: sources.then(|| String::from_utf8_lossy(&bytes).into_owned()),
                path,
            })
            .collect();
        let header = Header {
            kind: "header".into(),
            lanser: env!("CARGO_PKG_VERSION").into(),
            argv,
            root: ws.root.to_string_lossy().into_owned(),
            cwd: cwd.to_string_lossy().into_owned(),
            workspace_digest: workspace_digest(
                files.iter().map(|f| (f.path.as_str(), f.digest.as_str())),
            ),
            environment: serde_json::to_value(env).unwrap_or(Value::Null),
            sources,
            volatile: json!({
                "pid": std::process::id(),
                "unixTime": std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
            }),
        };
        self.write_line(&serde_json::to_string(&header).expect("headers serialize"));
        for f in files {
            let mut v = serde_json::to_value(&f).expect("files serialize");
            v["type"] = json!("file");
            self.write_line(&v.to_string());
        }
    }

    /// The header of a run of this process over `orch`'s workspace, then the inputs it has
    /// read; later inputs are recorded as they are read.
    pub async fn header_for(&self, orch: &mut Orchestrator, sources: bool) {
        let env = orch.environment().await;
        let argv = super::normalized_argv(std::env::args());
        self.header(argv, orch.ws(), &orch.opts().cwd, &env, sources);
        let rec = self.clone();
        let early = orch
            .opts()
            .inputs
            .attach(Arc::new(move |input: &InputRec| rec.input(input)));
        for input in &early {
            self.input(input);
        }
    }

    /// An `input` record.
    pub fn input(&self, input: &InputRec) {
        let mut v = serde_json::to_value(input).expect("inputs serialize");
        v["type"] = json!("input");
        self.write_line(&v.to_string());
    }

    /// The tap that records every frame and the end of the stream.
    pub fn tap(&self) -> Tap {
        let rec = self.clone();
        Arc::new(move |event: Tapped<'_>| match event {
            Tapped::Frame(dir, body) => rec.frame(dir, body),
            Tapped::End { error, stderr } => rec.eof(error, stderr),
        })
    }

    fn eof(&self, error: Option<&FrameError>, stderr: &[String]) {
        let error = error.map(|e| match e {
            FrameError::BadLength(v) => EndError::BadLength(v.clone()),
            other => EndError::Other(crate::error::chain(other)),
        });
        let stderr = stderr
            .iter()
            .map(|l| tokenize_root(l, &self.root))
            .collect();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.seq += 1;
        let rec = EofRec {
            seq: st.seq,
            error,
            stderr,
        };
        let mut v = serde_json::to_value(&rec).expect("eof records serialize");
        v["type"] = json!("eof");
        drop(st);
        self.write_line(&v.to_string());
    }

    fn frame(&self, dir: Dir, body: &str) {
        let body = tokenize_root(body, &self.root);
        // Frames are kept as JSON; a body that is not JSON (or spans lines) is kept as text.
        let value = match serde_json::from_str::<Value>(&body) {
            Ok(_) if !body.contains(['\n', '\r']) => body,
            Ok(v) => v.to_string(),
            Err(_) => Value::String(body).to_string(),
        };
        let dir = match dir {
            Dir::Send => "send",
            Dir::Recv => "recv",
        };
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.seq += 1;
        let line = format!(
            "{{\"type\":\"rpc\",\"dir\":\"{dir}\",\"seq\":{},\"body\":{value}}}",
            st.seq
        );
        drop(st);
        self.write_line(&line);
    }

    /// One operation: its input line and the bundle as printed.
    pub fn op(&self, line: usize, input: &str, memo: bool, bundle: &Bundle) {
        let n = {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            st.ops += 1;
            st.ops
        };
        let rec = OpRec {
            n,
            line,
            input: input.to_string(),
            memo,
            bundle: serde_json::to_value(bundle).expect("bundles serialize"),
        };
        let mut v = serde_json::to_value(&rec).expect("ops serialize");
        v["type"] = json!("op");
        self.write_line(&v.to_string());
        self.flush();
    }

    fn flush(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = st.out.flush() {
            st.error.get_or_insert(Arc::new(e));
        }
    }

    /// Flush; the first write failure, if any, as an error.
    pub fn finish(&self) -> Result<()> {
        self.flush();
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &st.error {
            Some(e) => Err(LanserError::new(
                ErrorCode::FsPermissions,
                format!("cannot write trace file {}", self.path.display()),
            )
            .with_source(e.clone())),
            None => Ok(()),
        }
    }
}
