//! The daemon's transport on Windows: a named pipe, through tokio's
//! `tokio::net::windows::named_pipe` (tokio is already the runtime; no other crate needed).
//!
//! The pipe is `\\.\pipe\lanser-<key>-<random>`: the key is the hash of the state
//! directory's `sock` path (the per-workspace key the Unix socket path is made of, with
//! `$LANSER_HOME` in it), and the random part (128 bits from the OS-seeded hasher keys) means
//! no other user can create the pipe first and answer in this user's name — pipe names are
//! global, unlike a socket in a private directory. The daemon creates the first instance
//! (`FILE_FLAG_FIRST_PIPE_INSTANCE`, remote clients refused) and then publishes the name in
//! the state directory's `sock` file; clients read it there. The state directory lies in the
//! user's profile, whose ACL keeps other users out, so there are no modes to check.

use super::super::{DaemonError, Paths};
use std::hash::{BuildHasher, Hasher};
use std::io::ErrorKind;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
};

pub type ServerRead = tokio::io::ReadHalf<NamedPipeServer>;
pub type ServerWrite = tokio::io::WriteHalf<NamedPipeServer>;
pub type ClientRead = tokio::io::ReadHalf<NamedPipeClient>;
pub type ClientWrite = tokio::io::WriteHalf<NamedPipeClient>;

/// All instances of the pipe are busy (the daemon makes the next one right after a connect).
const ERROR_PIPE_BUSY: i32 = 231;
/// How long a client retries a busy pipe.
const BUSY_WAIT: Duration = Duration::from_secs(5);
const PREFIX: &str = r"\\.\pipe\lanser-";

/// Create the state directory (its ACL is inherited from the user's profile).
pub fn prepare(paths: &Paths) -> Result<(), DaemonError> {
    std::fs::create_dir_all(&paths.dir).map_err(|e| DaemonError::io(&paths.dir, e))
}

/// Nothing to check beyond what [`prepare`] says: no modes or uids on Windows.
pub fn check(_paths: &Paths) -> Result<(), DaemonError> {
    Ok(())
}

/// The pipe name the daemon published; `NotFound` when none did.
fn pipe_name(paths: &Paths) -> std::io::Result<String> {
    let name = std::fs::read_to_string(&paths.sock)?;
    let name = name.trim();
    if !name.starts_with(PREFIX) || name.contains(['/', '\n']) || name.len() > 256 {
        return Err(std::io::Error::new(
            ErrorKind::InvalidData,
            format!("{} does not name a lanser pipe", paths.sock.display()),
        ));
    }
    Ok(name.to_string())
}

/// A new pipe name for this workspace's daemon.
fn new_name(paths: &Paths) -> String {
    let key = crate::digest::sha256_hex(paths.sock.to_string_lossy().as_bytes());
    // Each RandomState is keyed from the OS's random source (the second one's key is
    // derived from the first's); the pid and the time only vary what is hashed.
    let salt = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let random: Vec<u64> = (0..2)
        .map(|i| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(salt);
            h.write_u32(std::process::id());
            h.write_u8(i);
            h.finish()
        })
        .collect();
    format!(
        "{PREFIX}{}-{:016x}{:016x}",
        &key[..16],
        random[0],
        random[1]
    )
}

/// Whether a daemon listens on the published pipe (a busy pipe has a daemon behind it).
pub fn probe(paths: &Paths) -> bool {
    let Ok(name) = pipe_name(paths) else {
        return false;
    };
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&name)
    {
        Ok(_) => true,
        Err(e) => e.raw_os_error() == Some(ERROR_PIPE_BUSY),
    }
}

/// The daemon's side: the pipe instance waiting for the next client.
pub struct Listener {
    name: String,
    next: Option<NamedPipeServer>,
}

impl Listener {
    /// Create the pipe's first instance under a new name, then publish the name (written
    /// beside `sock` and renamed over it, so a client never reads half a name).
    pub fn bind(paths: &Paths) -> std::io::Result<Listener> {
        let name = new_name(paths);
        let first = ServerOptions::new()
            .first_pipe_instance(true)
            .reject_remote_clients(true)
            .create(&name)?;
        let tmp = paths.sock.with_extension("tmp");
        std::fs::write(&tmp, &name)?;
        std::fs::rename(&tmp, &paths.sock)?;
        Ok(Listener {
            name,
            next: Some(first),
        })
    }

    fn instance(&self) -> std::io::Result<NamedPipeServer> {
        ServerOptions::new()
            .reject_remote_clients(true)
            .create(&self.name)
    }

    /// Stop listening; remove the published name unless another daemon has since published
    /// its own there.
    pub fn close(self, paths: &Paths) {
        let name = self.name.clone();
        drop(self);
        if pipe_name(paths).is_ok_and(|n| n == name) {
            remove(paths);
        }
    }

    /// The next connection. Cancel-safe: the instance waits in `self` until a client
    /// connects, and the next one is created before this one is handed over.
    pub async fn accept(&mut self) -> std::io::Result<(ServerRead, ServerWrite)> {
        if self.next.is_none() {
            match self.instance() {
                Ok(s) => self.next = Some(s),
                Err(e) => {
                    // Not a busy loop if instances cannot be made for a while.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    return Err(e);
                }
            }
        }
        let waiting = self.next.as_ref().expect("made above");
        if let Err(e) = waiting.connect().await {
            // A client that came and went before the connect completed: a fresh instance,
            // made before this one is dropped, so the pipe never has none.
            self.next = self.instance().ok();
            return Err(e);
        }
        let connected = self.next.take().expect("made above");
        self.next = self.instance().ok();
        Ok(tokio::io::split(connected))
    }
}

/// The published name, removed by a daemon that exits (or by `stop` after a killed one).
pub fn remove(paths: &Paths) {
    let _ = std::fs::remove_file(&paths.sock);
}

/// What `status` shows as the daemon's socket: the pipe, else the file that would name it.
pub fn address(paths: &Paths) -> String {
    pipe_name(paths).unwrap_or_else(|_| paths.sock.display().to_string())
}

/// Open the pipe, retrying while every instance is busy.
async fn open(name: &str) -> std::io::Result<NamedPipeClient> {
    let started = Instant::now();
    loop {
        match ClientOptions::new().open(name) {
            Err(e)
                if e.raw_os_error() == Some(ERROR_PIPE_BUSY) && started.elapsed() < BUSY_WAIT =>
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            other => return other,
        }
    }
}

/// Connect to the daemon (a batch stream).
pub async fn connect(paths: &Paths) -> std::io::Result<(ClientRead, ClientWrite)> {
    let name = pipe_name(paths)?;
    Ok(tokio::io::split(open(&name).await?))
}

/// Hangs up an [`exchange`] from another thread: its connection is closed, which the daemon
/// reads as the client giving up.
pub struct Hangup(tokio::sync::watch::Sender<bool>);

impl Hangup {
    /// As `UnixStream::shutdown` is called on Unix (the direction does not matter).
    pub fn shutdown(&self, _how: std::net::Shutdown) -> std::io::Result<()> {
        self.0.send_replace(true);
        Ok(())
    }
}

/// Send `line` (ending in a newline) and read one line back within `wait`; a [`Hangup`] is
/// in `held` meanwhile. The pipe is driven by a runtime of its own on a thread of its own,
/// so this blocks like a socket read whether or not the caller runs inside a runtime.
pub fn exchange(
    paths: &Paths,
    line: &[u8],
    wait: Duration,
    held: Option<&super::Held>,
) -> std::io::Result<String> {
    let name = pipe_name(paths)?;
    let (hangup, mut gone) = tokio::sync::watch::channel(false);
    if let Some(h) = held {
        *h.lock().unwrap_or_else(|p| p.into_inner()) = Some(Hangup(hangup));
    }
    let talk = async move {
        let (read, mut write) = tokio::io::split(open(&name).await?);
        write.write_all(line).await?;
        let mut answer = String::new();
        let mut reader = BufReader::new(read);
        tokio::select! {
            read = tokio::time::timeout(wait, reader.read_line(&mut answer)) => {
                read.map_err(|_| std::io::Error::new(ErrorKind::TimedOut, "no answer in time"))??;
            }
            _ = gone.wait_for(|g| *g) => {
                return Err(std::io::Error::new(ErrorKind::ConnectionAborted, "hung up"));
            }
        }
        Ok(answer)
    };
    let answer = std::thread::scope(|s| {
        s.spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(talk)
        })
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the pipe thread panicked")))
    });
    if let Some(h) = held {
        *h.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    answer
}

/// A new process group (Ctrl-C in the CLI's console does not reach it) and a console of its
/// own without a window (closing the terminal does not end it, and the servers it starts
/// open no windows).
pub fn detach(cmd: &mut Command) {
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    std::os::windows::process::CommandExt::creation_flags(
        cmd,
        CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW,
    );
}
