//! Files named on the command line whose content lanser reads (`check --patch FILE`,
//! `--prev-bundle FILE`; `-` is stdin): read in a live run — and, with `--trace-file`, handed
//! to the trace recorder as `input` records — or served from those records at replay, so a
//! replay never re-reads a file that may have changed or may not exist on this machine.
//!
//! Workspace files are not inputs in this sense: the trace's `file` records and workspace
//! digest cover them. The snapshot store's texts are (arg `snapshot`, path the `docVersion`):
//! a stale selector maps through the text it was made on, which the replay's machine lacks.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex};

/// Called with every read once a recorder is attached.
/// An `input` record: what reading a file named on the command line gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputRec {
    /// The flag that names the file (`--patch`, `--prev-bundle`).
    pub arg: String,
    /// The path as given (relative to the recorded `cwd`; `-` is stdin).
    pub path: String,
    /// sha256 of the bytes read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The text read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Why the read failed (instead of `digest` and `content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub type OnRead = Arc<dyn Fn(&InputRec) + Send + Sync>;

/// Recorded reads by (arg, path), in order.
type Served = HashMap<(String, String), VecDeque<InputRec>>;

/// Where input files come from. Cheap to clone; clones share their state.
#[derive(Clone, Default)]
pub struct Inputs(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// At replay: the recorded reads by (arg, path), in order.
    recorded: Option<Mutex<Served>>,
    /// Keep every read for a recorder (a traced run).
    logging: bool,
    log: Mutex<Vec<InputRec>>,
    on_read: Mutex<Option<OnRead>>,
}

impl Inputs {
    /// Read from disk (or stdin), keeping nothing.
    pub fn disk() -> Inputs {
        Inputs::default()
    }

    /// Read from disk, keeping every read for the trace recorder ([`Inputs::attach`]).
    pub fn logged() -> Inputs {
        Inputs(Arc::new(Inner {
            logging: true,
            ..Inner::default()
        }))
    }

    /// Serve `recs` (a trace's `input` records); a read the trace does not hold (a trace
    /// written before inputs were recorded) goes to disk.
    pub fn recorded(recs: &[InputRec]) -> Inputs {
        let mut map = Served::new();
        for r in recs {
            map.entry((r.arg.clone(), r.path.clone()))
                .or_default()
                .push_back(r.clone());
        }
        Inputs(Arc::new(Inner {
            recorded: Some(Mutex::new(map)),
            ..Inner::default()
        }))
    }

    /// The text of the file that `arg` names as `path`; `read` reads its bytes when it is not
    /// served from a trace. An error's text is what the read said (or what it said when
    /// recorded).
    pub fn read_to_string(
        &self,
        arg: &str,
        path: &str,
        read: impl FnOnce() -> io::Result<Vec<u8>>,
    ) -> io::Result<String> {
        if let Some(rec) = self.served(arg, path) {
            return match (rec.content, rec.error) {
                (Some(text), _) => Ok(text),
                (None, Some(e)) => Err(io::Error::other(e)),
                (None, None) => Err(io::Error::other("the trace recorded no content")),
            };
        }
        let result = read().and_then(|bytes| {
            let digest = crate::digest::sha256_tagged(&bytes);
            String::from_utf8(bytes)
                .map(|text| (digest, text))
                .map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    )
                })
        });
        if self.0.logging {
            let rec = match &result {
                Ok((digest, text)) => InputRec {
                    arg: arg.into(),
                    path: path.into(),
                    digest: Some(digest.clone()),
                    content: Some(text.clone()),
                    error: None,
                },
                Err(e) => InputRec {
                    arg: arg.into(),
                    path: path.into(),
                    digest: None,
                    content: None,
                    error: Some(e.to_string()),
                },
            };
            let hook = self.0.on_read.lock().unwrap_or_else(|p| p.into_inner());
            match hook.as_ref() {
                Some(f) => f(&rec),
                None => self
                    .0
                    .log
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(rec),
            }
        }
        result.map(|(_, text)| text)
    }

    /// Whether a read of (arg, path) would be served from a trace (nothing is consumed).
    pub fn serves(&self, arg: &str, path: &str) -> bool {
        self.0.recorded.as_ref().is_some_and(|r| {
            r.lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&(arg.to_string(), path.to_string()))
                .is_some_and(|q| !q.is_empty())
        })
    }

    /// The text a trace recorded for the next read of (arg, path), without consuming it.
    pub fn peek(&self, arg: &str, path: &str) -> Option<String> {
        let recorded = self.0.recorded.as_ref()?;
        let map = recorded.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&(arg.to_string(), path.to_string()))?
            .front()?
            .content
            .clone()
    }

    /// The recorded read for (arg, path): the next one, the last one again when exhausted.
    fn served(&self, arg: &str, path: &str) -> Option<InputRec> {
        let recorded = self.0.recorded.as_ref()?;
        let mut map = recorded.lock().unwrap_or_else(|p| p.into_inner());
        let queue = map.get_mut(&(arg.to_string(), path.to_string()))?;
        if queue.len() > 1 {
            queue.pop_front()
        } else {
            queue.front().cloned()
        }
    }

    /// The reads made so far; every later one goes to `on_read`.
    pub fn attach(&self, on_read: OnRead) -> Vec<InputRec> {
        let mut hook = self.0.on_read.lock().unwrap_or_else(|p| p.into_inner());
        *hook = Some(on_read);
        std::mem::take(&mut *self.0.log.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_reads_reach_the_recorder_and_replay_serves_them() {
        let live = Inputs::logged();
        let text = live
            .read_to_string("--patch", "p.diff", || Ok(b"one".to_vec()))
            .unwrap();
        assert_eq!(text, "one");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let early = live.attach(Arc::new(move |r: &InputRec| {
            sink.lock().unwrap().push(r.clone())
        }));
        assert_eq!(early.len(), 1);
        assert_eq!(early[0].content.as_deref(), Some("one"));
        let missing = live.read_to_string("--prev-bundle", "b.json", || {
            Err(io::Error::new(io::ErrorKind::NotFound, "gone"))
        });
        assert!(missing.is_err());
        let late = seen.lock().unwrap().clone();
        assert_eq!(late[0].error.as_deref(), Some("gone"));

        let replay = Inputs::recorded(&[early[0].clone(), late[0].clone()]);
        let never = || -> io::Result<Vec<u8>> { panic!("replay read the disk") };
        assert_eq!(
            replay.read_to_string("--patch", "p.diff", never).unwrap(),
            "one"
        );
        let e = replay
            .read_to_string("--prev-bundle", "b.json", never)
            .unwrap_err();
        assert_eq!(e.to_string(), "gone");
        // Not recorded (an older trace): the disk.
        assert_eq!(
            replay
                .read_to_string("--patch", "q.diff", || Ok(b"two".to_vec()))
                .unwrap(),
            "two"
        );
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let e = Inputs::disk()
            .read_to_string("--patch", "p", || Ok(vec![0xff]))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }
}
