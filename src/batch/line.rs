//! A batch request line, both ways: `{"id"?, "cmd", "selector"?, "args"?}` parsed with the
//! CLI's own clap definitions into a [`Request`], and a parsed command line printed back as
//! such a line (what a trace records).

use crate::cli::Cli;
use crate::commands::Request;
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches};
use serde_json::{Map, Value};

/// Top-level keys of a request line.
const LINE_KEYS: &[&str] = &["id", "cmd", "selector", "args"];

/// Parses request lines with the CLI's own definitions.
pub struct LineParser {
    cli: clap::Command,
}

impl Default for LineParser {
    fn default() -> Self {
        let mut cli = Cli::command();
        // Built, so positionals know their index (`src` before `dst`, whatever the key order).
        cli.build();
        LineParser { cli }
    }
}

/// A batch line that asks for no request: the `cmd` it named (empty if none) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{why}")]
pub struct BadLine {
    pub cmd: String,
    pub why: String,
}

impl BadLine {
    pub fn new(cmd: &str, why: impl Into<String>) -> Self {
        BadLine {
            cmd: cmd.to_string(),
            why: why.into(),
        }
    }
}

impl LineParser {
    /// The request a line asks for, or why it asks for none.
    pub fn parse(&mut self, text: &str) -> std::result::Result<Request, BadLine> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| BadLine::new("", format!("not JSON: {e}")))?;
        let Value::Object(obj) = v else {
            return Err(BadLine::new("", "not a JSON object"));
        };
        if let Some(k) = obj.keys().find(|k| !LINE_KEYS.contains(&k.as_str())) {
            return Err(BadLine::new(
                "",
                format!("unknown key {k:?} (use id, cmd, selector, args)"),
            ));
        }
        let cmd = match obj.get("cmd") {
            Some(Value::String(c)) => c.clone(),
            _ => return Err(BadLine::new("", "no \"cmd\" string")),
        };
        let fail = |m: String| BadLine::new(&cmd, m);
        let sub = self
            .cli
            .find_subcommand(&cmd)
            .ok_or_else(|| fail(format!("unknown cmd {cmd:?}")))?;
        let (mut flags, mut positionals) = (Vec::new(), Vec::<(usize, Vec<String>)>::new());
        let mut fields: Vec<(String, Value)> = Vec::new();
        match obj.get("selector") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => fields.push(("selector".into(), Value::String(s.clone()))),
            // The JSON PositionSpec is accepted wherever a string is.
            Some(v @ Value::Object(_)) => {
                fields.push(("selector".into(), Value::String(v.to_string())))
            }
            Some(_) => {
                return Err(fail(
                    "\"selector\" must be a string or a PositionSpec object".into(),
                ))
            }
        }
        match obj.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => fields.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
            Some(_) => return Err(fail("\"args\" must be an object".into())),
        }
        for (key, value) in fields {
            let arg = sub
                .get_arguments()
                .filter(|a| !a.is_global_set())
                .find(|a| a.get_long() == Some(key.as_str()) || a.get_id() == key.as_str())
                .ok_or_else(|| fail(format!("{cmd} has no argument {key:?}")))?;
            let values: Vec<String> = match &value {
                Value::Array(items) => items.iter().map(scalar).collect::<Option<_>>(),
                v => scalar(v).map(|s| vec![s]),
            }
            .ok_or_else(|| {
                fail(format!(
                    "argument {key:?} must be a string, number, boolean or a list of them"
                ))
            })?;
            if arg.is_positional() {
                positionals.push((arg.get_index().unwrap_or(0), values));
            } else if matches!(arg.get_action(), ArgAction::SetTrue) {
                match value {
                    Value::Bool(true) => {
                        flags.push(format!("--{}", arg.get_long().unwrap_or(&key)))
                    }
                    Value::Bool(false) => {}
                    _ => return Err(fail(format!("flag {key:?} takes true or false"))),
                }
            } else {
                let long = arg.get_long().unwrap_or(&key).to_string();
                flags.extend(values.into_iter().map(|v| format!("--{long}={v}")));
            }
        }
        positionals.sort_by_key(|(i, _)| *i);
        let mut argv = vec!["lanser".to_string(), cmd.clone()];
        argv.extend(flags);
        argv.push("--".into());
        argv.extend(positionals.into_iter().flat_map(|(_, v)| v));
        crate::cli::note_parse("line");
        let matches = self
            .cli
            .try_get_matches_from_mut(argv)
            .map_err(|e| fail(clap_message(&e)))?;
        let parsed = Cli::from_arg_matches(&matches).map_err(|e| fail(clap_message(&e)))?;
        parsed
            .command
            .request()
            .ok_or_else(|| fail(format!("{cmd} cannot run inside a batch")))
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// clap's message on one line: its first paragraph, without the `error: ` prefix.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.split("\n\n").next().unwrap_or_default();
    let line = first
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_string()
}

/// The request line of a command given on the command line (the inverse of
/// [`LineParser::parse`]), for the trace.
pub fn request_line(matches: &ArgMatches) -> Option<String> {
    let (cmd, sub_m) = matches.subcommand()?;
    let cli = Cli::command();
    let sub = cli.find_subcommand(cmd)?;
    let mut line = Map::new();
    line.insert("cmd".into(), Value::String(cmd.to_string()));
    let mut args = Map::new();
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        if sub_m.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let key = arg.get_long().unwrap_or(id).to_string();
        let value = if matches!(arg.get_action(), ArgAction::SetTrue) {
            Value::Bool(true)
        } else {
            let raw: Vec<Value> = sub_m
                .get_raw(id)
                .into_iter()
                .flatten()
                .map(|s| Value::String(s.to_string_lossy().into_owned()))
                .collect();
            let many = matches!(arg.get_action(), ArgAction::Append)
                || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
            match (many, raw.len()) {
                (false, 1) => raw.into_iter().next().unwrap_or(Value::Null),
                _ => Value::Array(raw),
            }
        };
        if id == "selector" {
            line.insert("selector".into(), value);
        } else {
            args.insert(key, value);
        }
    }
    line.insert("args".into(), Value::Object(args));
    Some(Value::Object(line).to_string())
}
