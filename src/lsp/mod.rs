//! Talking to a language server: framing ([`transport`]), the session ([`session`]) and
//! finding or installing the pinned server ([`provision`]).

pub mod changes;
pub mod provision;
pub mod session;
pub mod transport;
