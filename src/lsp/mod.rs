//! Talking to a language server: framing ([`transport`]) of typed messages ([`message`]), the
//! session ([`session`]) and what it declares ([`capabilities`]), what the server sends of its
//! own accord ([`inbound`], handled in [`handler`]), what the server sees and the diagnostics
//! pulled under it ([`view`], [`diagnostics`]), when a server without a signal of its own has
//! loaded a document ([`settle`]) and telling it what changed on disk
//! ([`changes`]). Which server to start, and installing it, is [`crate::servers`]'.

pub mod capabilities;
pub mod changes;
pub mod diagnostics;
pub mod handler;
pub mod inbound;
pub mod message;
pub mod session;
mod settle;
#[cfg(test)]
mod tests;
pub mod transport;
pub mod tsserver;
pub mod typed;
pub mod view;
