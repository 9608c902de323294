//! Talking to a language server: framing ([`transport`]), the session ([`session`]) and what
//! it declares ([`capabilities`]), what the server sees and the diagnostics pulled under it
//! ([`view`]) and telling it what changed on disk ([`changes`]). Which server to start, and installing
//! it, is [`crate::servers`]'.

pub mod capabilities;
pub mod changes;
pub mod handler;
pub mod session;
pub mod transport;
pub mod tsserver;
pub mod typed;
pub mod view;
