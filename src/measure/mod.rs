//! What a change does, measured: the diagnostics it would bring (speculatively, in memory —
//! [`speculate`], over the files [`scope`] says the change can alter, asking the server the
//! return types it infers where they decide it: [`inferred`]; new methods named nowhere else
//! set aside: [`fresh`]; changed methods judged by name where no protocol declares them:
//! [`narrow`]), the errors that were already
//! there at HEAD ([`baseline`]), what it can reach and which tests cover it ([`impact`]), the
//! structural terms of pr-v2 ([`structural`]) and the test terms of pr-v2 and pr-v3
//! ([`tests_term`]).
//!
//! Operations (`check`, `impact`, `tests`, the mutations' previews) and the process reward
//! read these; nothing here is an operation or knows about bundles beyond the reward's
//! measured terms. Nothing here takes the engine: a measurement that asks a server gets a
//! [`crate::orchestrator::Cx`] (the workspace, the options and one server, started on first
//! need), one that only reads files gets the [`crate::orchestrator::Ground`].

pub mod baseline;
pub mod fresh;
pub mod impact;
pub mod inferred;
pub mod narrow;
pub mod scope;
pub mod speculate;
pub mod structural;
pub mod tests_term;
