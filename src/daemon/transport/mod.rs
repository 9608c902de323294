//! How a client reaches the workspace's daemon: the one place the platform shows. On Unix a
//! socket (`sock`) in the owner-only state directory; on Windows a named pipe whose name
//! (derived from the same per-workspace state directory, plus a random part) the daemon
//! publishes in that directory's `sock` file. Everything else in `daemon` talks through
//! this small API:
//!
//! - [`prepare`]: make the state directory (private where the platform has modes) and check
//!   what is in it; [`check`]: the same checks before connecting.
//! - [`Listener::bind`] / [`Listener::accept`] / `Listener::close`: the daemon's side, each
//!   connection split into a [`ServerRead`] and a [`ServerWrite`]; [`remove`] clears what a
//!   killed daemon left.
//! - [`connect`] (async, for batch streams), [`exchange`] (blocking: one line out, one line
//!   back, within a deadline, cancellable through a [`Held`]) and [`probe`] (does a daemon
//!   listen): the clients' side.
//! - [`detach`]: start the daemon process out of reach of the terminal's Ctrl-C.
//! - [`address`]: what `lanser daemon status` shows as the socket.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as platform;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as platform;

pub use platform::{
    address, check, connect, detach, exchange, prepare, probe, remove, ClientRead, ClientWrite,
    Hangup, Listener, ServerRead, ServerWrite,
};

/// A connection another thread may hang up (with `shutdown`) while [`exchange`] waits on it.
pub type Held = std::sync::Mutex<Option<Hangup>>;
