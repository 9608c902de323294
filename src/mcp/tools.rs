//! The MCP tool table: one tool per operation, made from the catalog and its overlay by
//! [`super::generic`] (its description for a model, its annotations, its arguments), and how a
//! call becomes a `lanser batch` request line plus the global options it sets (typed: applied
//! to the server's own, never parsed as words).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::path::Path;

pub use super::args::*;

/// One tool call, ready to answer.
#[derive(Debug)]
pub struct Call {
    /// The `lanser batch` request line.
    pub line: Value,
    /// The global options it sets over those `lanser mcp` was started with.
    pub globals: Globals,
    /// `check_patch`: the diff, read as `--patch -` reads stdin.
    pub stdin_patch: Option<String>,
    /// Its 1-based line number in a batch (1 for a single call): a line that is not a
    /// request is an error bundle naming it, as `lanser batch` names it.
    pub number: usize,
    pub offset: usize,
    pub limit: usize,
}

/// The global options a call sets (each `None`/`false` leaves the server's own).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Globals {
    pub timeout: Option<u64>,
    pub index_io: Option<String>,
    pub pick: Option<String>,
    pub tau: Option<f64>,
    pub reward: Option<String>,
    /// `--tests impacted`.
    pub tests: bool,
    pub test_budget: Option<f64>,
}

impl Globals {
    /// Whether the call sets none.
    pub fn is_empty(&self) -> bool {
        *self == Globals::default()
    }

    /// `base` with these set, checked as the command line checks them.
    pub fn over(&self, base: &crate::cli::Global) -> crate::error::Result<crate::cli::Global> {
        use crate::error::LanserError;
        let mut g = base.clone();
        if let Some(t) = self.timeout {
            g.timeout = t as f64;
        }
        if let Some(unit) = &self.index_io {
            g.index_io = crate::text::Encoding::parse(unit).ok_or_else(|| {
                LanserError::usage(format!(
                    "index_io: unknown unit {unit:?}: use utf-8, utf-16 or codepoint"
                ))
            })?;
        }
        if let Some(p) = &self.pick {
            if p != "best" {
                return Err(LanserError::usage(format!("pick: {p:?} is not `best`")));
            }
            g.pick = Some(p.clone());
        }
        if let Some(t) = self.tau {
            g.tau = t;
        }
        if let Some(r) = &self.reward {
            g.reward = r.clone();
        }
        if self.tests {
            g.tests = Some("impacted".into());
        }
        if let Some(b) = self.test_budget {
            g.test_budget = b;
        }
        Ok(g)
    }
}

/// What the client sees of a tool.
pub struct Spec {
    pub name: String,
    pub title: String,
    pub description: String,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// The operation it asks (`request.cmd`).
    pub cmd: String,
    pub schema: Value,
    /// The operation, as the catalog and its overlay describe it.
    pub op: crate::commands::catalog::OperationInfo,
}

impl Spec {
    /// The request line (and options) for a call with `arguments`, or why it is not one.
    pub fn call(&self, arguments: Value, root: &Path) -> Result<Call, String> {
        super::generic::build(&self.op, arguments, root)
    }
}

pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let mut s = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({}));
    if let Some(o) = s.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.entry("type").or_insert(json!("object"));
    }
    s
}

pub(crate) fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, String> {
    let arguments = match arguments {
        Value::Null => json!({}),
        other => other,
    };
    serde_json::from_value(arguments).map_err(|e| format!("bad arguments: {e}"))
}

/// The selector a position names.
pub(crate) fn selector(pos: &Position, root: &Path) -> Result<Value, String> {
    if let Some(s) = &pos.selector {
        if pos.file.is_some() || pos.line.is_some() || pos.symbol.is_some() {
            return Err("give either `selector` or `file`/`line`/`symbol`, not both".into());
        }
        return Ok(s.clone());
    }
    let (Some(file), Some(line)) = (&pos.file, pos.line) else {
        return Err("a position is needed: `selector`, or `file` and `line`".into());
    };
    if line == 0 {
        return Err("`line` is 1-based: 0 is not a line".into());
    }
    let path = crate::selector::spec::encode_path(file);
    Ok(json!(match &pos.symbol {
        Some(symbol) => format!("{path}@L{line}:{symbol}"),
        None => format!("{path}@L{line}:C{}", first_column(root, file, line)),
    }))
}

/// The 1-based column of the first non-blank character of `line` (1 when the file or line
/// cannot be read: the selector then fails as the CLI's would).
fn first_column(root: &Path, file: &str, line: u64) -> usize {
    std::fs::read_to_string(root.join(file))
        .ok()
        .and_then(|t| {
            let l = t.lines().nth(usize::try_from(line).ok()? - 1)?;
            Some(l.chars().take_while(|c| c.is_whitespace()).count() + 1)
        })
        .unwrap_or(1)
}

pub(crate) fn call(cmd: &str, selector: Option<Value>, args: Value, common: &Common) -> Call {
    let mut line = Map::new();
    line.insert("cmd".into(), json!(cmd));
    if let Some(s) = selector {
        line.insert("selector".into(), s);
    }
    let args: Map<String, Value> = match args {
        Value::Object(m) => m.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Map::new(),
    };
    if !args.is_empty() {
        line.insert("args".into(), Value::Object(args));
    }
    let globals = Globals {
        timeout: common.timeout,
        index_io: common.index_io.clone(),
        pick: common.pick.clone(),
        tau: common.tau,
        ..Globals::default()
    };
    Call {
        line: Value::Object(line),
        globals,
        stdin_patch: None,
        number: 1,
        offset: common.offset.unwrap_or(0),
        limit: common.limit.unwrap_or(50).max(1),
    }
}

/// The tools' former names, from when MCP named twelve operations apart from the CLI, batch
/// and SDK: a call under one is answered as under the operation's own name. Kept for one
/// release and not listed (docs/mcp.md).
pub const FORMER_NAMES: &[(&str, &str)] = &[
    ("definition", "def"),
    ("type_definition", "type_def"),
    ("declaration", "decl"),
    ("references", "refs"),
    ("diagnostics", "diag"),
    ("implementation", "impl"),
    ("call_hierarchy", "calls"),
    ("apply_patch", "apply"),
    ("check_patch", "check"),
    ("completion", "complete"),
    ("type_hierarchy", "types"),
    ("inlay_hints", "inlay"),
];

/// The tool a call names: its own name, or the one a former name stands for.
pub fn canonical(name: &str) -> &str {
    FORMER_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// Every tool, in the order `tools/list` gives them (by name): each named after its operation
/// (`request.cmd`, `-` as `_`) and made from the catalog and its overlay.
pub fn all() -> Vec<Spec> {
    super::generic::tools()
}
