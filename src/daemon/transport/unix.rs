//! The daemon's transport on Unix: a socket, `sock` (0600), in the state directory (0700),
//! both owned by the user, so that no other user's daemon can answer in this user's name.

use super::super::{DaemonError, Paths};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

pub type ServerRead = tokio::net::unix::OwnedReadHalf;
pub type ServerWrite = tokio::net::unix::OwnedWriteHalf;
pub type ClientRead = tokio::net::unix::OwnedReadHalf;
pub type ClientWrite = tokio::net::unix::OwnedWriteHalf;
/// A clone of the connection [`exchange`] waits on; `shutdown` makes its read return.
pub type Hangup = UnixStream;

/// Create the directory, owner-only (0700). One that already exists must be ours and
/// private: a directory (or socket) another user owns, or that others may write, could be
/// someone else's daemon answering in our name.
pub fn prepare(paths: &Paths) -> Result<(), DaemonError> {
    if let Some(parent) = paths.dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| DaemonError::io(parent, e))?;
    }
    // Made 0700 by mkdir itself: a client racing the start never sees it open.
    match std::fs::DirBuilder::new().mode(0o700).create(&paths.dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => private(&paths.dir)?,
        Err(e) => return Err(DaemonError::io(&paths.dir, e)),
    }
    if paths.sock.exists() {
        owned(&paths.sock)?;
    }
    // sun_path holds 108 bytes including the terminating NUL (104 on macOS and the BSDs).
    let sun_path = if cfg!(any(target_os = "linux", target_os = "android")) {
        108
    } else {
        104
    };
    if paths.sock.as_os_str().len() >= sun_path {
        return Err(DaemonError::PathTooLong(paths.sock.clone()));
    }
    Ok(())
}

/// Before connecting: the directory is private and the socket ours.
pub fn check(paths: &Paths) -> Result<(), DaemonError> {
    private(&paths.dir)?;
    owned(&paths.sock)
}

/// `path` is owned by this process's user and neither group nor others may use it.
fn private(path: &Path) -> Result<(), DaemonError> {
    check_owner(path, true)
}

/// `path` is owned by this process's user. (The socket: the private directory around it is
/// what keeps others out, and its own mode is set just after it is bound, so a client racing
/// the daemon's start may see it before.)
fn owned(path: &Path) -> Result<(), DaemonError> {
    check_owner(path, false)
}

fn check_owner(path: &Path, private_mode: bool) -> Result<(), DaemonError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| DaemonError::io(path, e))?;
    let me = my_uid();
    let why = if me.is_some_and(|uid| meta.uid() != uid) {
        Some(format!("owned by uid {}, not this user", meta.uid()))
    } else if private_mode && meta.mode() & 0o077 != 0 {
        Some(format!(
            "mode {:o} lets other users in",
            meta.mode() & 0o777
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(DaemonError::Insecure {
            path: path.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
}

/// This process's uid: the owner of `/proc/self` (Linux), else what `id -u` says (macOS and
/// the BSDs have no `/proc`), asked once.
fn my_uid() -> Option<u32> {
    if let Ok(m) = std::fs::metadata("/proc/self") {
        return Some(m.uid());
    }
    static UID: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *UID.get_or_init(|| {
        let out = Command::new("id").arg("-u").output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    })
}

/// Whether a daemon listens on the socket.
pub fn probe(paths: &Paths) -> bool {
    UnixStream::connect(&paths.sock).is_ok()
}

/// The daemon's listening socket.
pub struct Listener(tokio::net::UnixListener);

impl Listener {
    /// Bind the socket (one left by a killed daemon is removed first), mode 0600.
    pub fn bind(paths: &Paths) -> std::io::Result<Listener> {
        match std::fs::remove_file(&paths.sock) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = tokio::net::UnixListener::bind(&paths.sock)?;
        std::fs::set_permissions(&paths.sock, std::fs::Permissions::from_mode(0o600))?;
        Ok(Listener(listener))
    }

    /// Stop listening and remove the socket.
    pub fn close(self, paths: &Paths) {
        drop(self);
        remove(paths);
    }

    /// The next connection (cancel-safe).
    pub async fn accept(&mut self) -> std::io::Result<(ServerRead, ServerWrite)> {
        let (stream, _) = self.0.accept().await?;
        Ok(stream.into_split())
    }
}

/// The socket, removed by a daemon that exits (or by `stop` after a killed one).
pub fn remove(paths: &Paths) {
    let _ = std::fs::remove_file(&paths.sock);
}

/// What `status` shows as the daemon's socket.
pub fn address(paths: &Paths) -> String {
    paths.sock.display().to_string()
}

/// Connect to the daemon (a batch stream).
pub async fn connect(paths: &Paths) -> std::io::Result<(ClientRead, ClientWrite)> {
    Ok(tokio::net::UnixStream::connect(&paths.sock)
        .await?
        .into_split())
}

/// Send `line` (ending in a newline) and read one line back within `wait`; a clone of the
/// connection is in `held` meanwhile, so that another thread can shut it down.
pub fn exchange(
    paths: &Paths,
    line: &[u8],
    wait: Duration,
    held: Option<&super::Held>,
) -> std::io::Result<String> {
    let mut stream = UnixStream::connect(&paths.sock)?;
    stream.set_read_timeout(Some(wait))?;
    if let Some(h) = held {
        *h.lock().unwrap_or_else(|p| p.into_inner()) = stream.try_clone().ok();
    }
    stream.write_all(line)?;
    let mut answer = String::new();
    let read = BufReader::new(&stream).read_line(&mut answer);
    if let Some(h) = held {
        *h.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    read.map(|_| answer)
}

/// Its own process group: a Ctrl-C aimed at the CLI does not reach the daemon.
pub fn detach(cmd: &mut Command) {
    std::os::unix::process::CommandExt::process_group(cmd, 0);
}
