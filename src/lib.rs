//! lanser: a CLI orchestrator that pins a language server (Pyright) and turns its answers into
//! deterministic Analysis Bundles for coding agents and CI.
//!
//! The library API is [`orchestrator::Orchestrator`] (one workspace, one server session) with
//! [`commands::Execute`]: `orch.execute(&request)` turns a [`commands::Request`] (say
//! `Request::parse(["refs", "a.py@L3:x"])`) into a sealed
//! bundle. [`run`] is the command line on top of it (`driver`). README "Architecture" maps the modules.

pub mod batch;
pub mod bundle;
pub mod cli;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod digest;
pub mod document;
pub mod driver;
pub mod edits;
pub mod env;
pub mod error;
pub mod exit;
pub mod git;
pub mod home;
pub mod inputs;
pub mod languages;
pub mod lsp;
pub mod mcp;
pub mod measure;
pub mod memo;
pub mod orchestrator;
pub mod outcome;
pub mod output;
pub mod python;
pub mod relocate;
pub mod replay;
pub mod reward;
pub mod safety;
pub mod schema;
pub mod selector;
pub mod servers;
pub mod testrun;
pub mod text;
pub mod tools;
pub mod trace;
pub mod trust;
pub mod workspace;

pub use driver::run;
pub use output::report;
