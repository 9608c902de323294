//! Schema contracts (docs/schemas.md): JSON Schemas (draft 2020-12)
//! derived with schemars from the types lanser reads and writes, and validation against them.
//!
//! Four contracts: the PositionSpec `selector`, the `batch` request line, the Analysis
//! `bundle` (its `facts` typed per `request.cmd`, see [`facts`]) and the `trace` event. The
//! checked-in `schemas/` directory is [`export`]'s output; a test fails when they differ, so a
//! contract change is always a visible diff. Objects are closed (`additionalProperties: false`)
//! wherever lanser fixes the keys.

pub mod cmd;

use crate::bundle::{Bundle, ErrorObj};
use crate::selector::PositionSpec;
use crate::trace::{EofRec, FileRec, Header, InputRec, OpRec};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

/// Base of every schema's `$id`.
pub const ID_BASE: &str = "https://lanser.dev/schemas/";

pub use crate::cli::SchemaKind as Kind;

/// A batch request line: `{"id"?, "cmd", "selector"?, "args"?}` (batch/line.rs).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct BatchLine {
    /// Any JSON value; lines are answered in input order.
    #[serde(default)]
    id: Option<Value>,
    /// A subcommand name that prints a bundle.
    cmd: String,
    /// A selector string (`src/app.py@L42:C7`) or a PositionSpec object.
    #[serde(default)]
    selector: Option<SelectorField>,
    /// The subcommand's own flags by long name (positionals by name: `file`, `targets`).
    #[serde(default)]
    args: Option<Map<String, Value>>,
}

#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum SelectorField {
    Text(String),
    Spec(PositionSpec),
}

/// The `type` tag of a trace event.
#[derive(JsonSchema)]
#[allow(dead_code)]
enum FileTag {
    #[serde(rename = "file")]
    File,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum OpTag {
    #[serde(rename = "op")]
    Op,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum RpcTag {
    #[serde(rename = "rpc")]
    Rpc,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum InputTag {
    #[serde(rename = "input")]
    Input,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum EofTag {
    #[serde(rename = "eof")]
    Eof,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Dir {
    Send,
    Recv,
}

/// A `file` record.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct FileEvent {
    #[serde(rename = "type")]
    kind: FileTag,
    #[serde(flatten)]
    rec: FileRec,
}

/// An `rpc` record: one JSON-RPC frame, the workspace root written as `${LANSER_ROOT}`.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct RpcEvent {
    #[serde(rename = "type")]
    kind: RpcTag,
    dir: Dir,
    seq: u64,
    body: Value,
}

/// An `input` record: the content of a file the command line names (`--patch`,
/// `--prev-bundle`), served to a replay instead of the file.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct InputEvent {
    #[serde(rename = "type")]
    kind: InputTag,
    #[serde(flatten)]
    rec: InputRec,
}

/// An `eof` record: the server's stdout ended here (among the `rpc` records, by `seq`).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct EofEvent {
    #[serde(rename = "type")]
    kind: EofTag,
    #[serde(flatten)]
    rec: EofRec,
}

/// An `op` record: the request line and the bundle exactly as printed.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct OpEvent {
    #[serde(rename = "type")]
    kind: OpTag,
    #[serde(flatten)]
    rec: OpRec,
}

/// One line of a trace.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum TraceEvent {
    Header(Header),
    File(FileEvent),
    Rpc(RpcEvent),
    Input(InputEvent),
    Eof(EofEvent),
    Op(OpEvent),
}

/// Inputs (selector, batch line) are described as lanser reads them: optional keys may be left
/// out. Outputs (bundle, trace) as lanser writes them: a key it always prints is required.
fn generator(kind: Kind) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12();
    match kind {
        Kind::Selector | Kind::Batch => settings.for_deserialize(),
        Kind::Bundle | Kind::Trace => settings.for_serialize(),
    }
    .into_generator()
}

/// The JSON Schema of `kind`, as exported.
pub fn schema(kind: Kind) -> Value {
    let mut g = generator(kind);
    let mut root = match kind {
        Kind::Selector => g.root_schema_for::<PositionSpec>().to_value(),
        Kind::Batch => {
            let mut v = g.root_schema_for::<BatchLine>().to_value();
            let cmds: Vec<&str> = crate::commands::facts_schemas()
                .iter()
                .map(|(c, _)| *c)
                .collect();
            v["properties"]["cmd"]["enum"] = json!(cmds);
            v
        }
        Kind::Bundle => bundle_schema(&mut g),
        Kind::Trace => {
            // The bundle inside an op record is the bundle contract, conditions included.
            let bundle = bundle_schema(&mut g);
            let mut v = g.root_schema_for::<TraceEvent>().to_value();
            v["$defs"]["Bundle"]["allOf"] = bundle["allOf"].clone();
            v["$defs"]["Header"]["properties"]["type"] = json!({"const": "header"});
            v
        }
    };
    if let Value::Object(m) = &mut root {
        m.insert(
            "$id".into(),
            json!(format!("{ID_BASE}{}", kind.file_name())),
        );
        m.insert("title".into(), json!(title(kind)));
    }
    close_objects(&mut root);
    root
}

fn title(kind: Kind) -> &'static str {
    match kind {
        Kind::Selector => "lanser PositionSpec (JSON selector)",
        Kind::Bundle => "lanser Analysis Bundle",
        Kind::Batch => "lanser batch request line",
        Kind::Trace => "lanser trace event",
    }
}

/// The bundle envelope, with `facts` tied to `request.cmd` and `error` to `status`.
fn bundle_schema(g: &mut SchemaGenerator) -> Value {
    let variants: Vec<(&str, Value)> = crate::commands::facts_schemas()
        .into_iter()
        .map(|(cmd, make)| (cmd, make(g).to_value()))
        .collect();
    g.subschema_for::<ErrorObj>();
    let mut root = g.root_schema_for::<Bundle>().to_value();
    let cmds: Vec<&str> = variants.iter().map(|(c, _)| *c).collect();
    let mut all = vec![
        json!({
            "if": {"properties": {"status": {"const": "error"}}},
            "then": {"properties": {"facts": {"type": "null"}, "error": {"$ref": "#/$defs/ErrorObj"}}},
            "else": {"properties": {"error": {"type": "null"}}}
        }),
        json!({
            "if": {"properties": {"status": {"const": "ok"}}},
            "then": {"properties": {"request": {"properties": {"cmd": {"enum": cmds}}}}}
        }),
    ];
    for (cmd, facts) in variants {
        all.push(json!({
            "if": {
                "properties": {
                    "status": {"const": "ok"},
                    "request": {"properties": {"cmd": {"const": cmd}}}
                }
            },
            "then": {"properties": {"facts": facts}}
        }));
    }
    root["allOf"] = Value::Array(all);
    root
}

/// `additionalProperties: false` on every object schema that lists its properties and says
/// nothing about others: lanser fixes those keys, so a new one must be a schema change.
fn close_objects(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let closable = m.contains_key("properties")
                && !m.contains_key("additionalProperties")
                && !m.contains_key("unevaluatedProperties");
            if closable {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (k, child) in m.iter_mut() {
                // Conditions look at a few keys of a bundle; they must not close it.
                if !matches!(k.as_str(), "if" | "then" | "else") {
                    close_objects(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// One violation: where (a JSON pointer into the instance) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

/// A compiled validator for one contract.
pub struct Validator {
    inner: jsonschema::Validator,
}

impl Validator {
    /// The validator for `kind`'s schema as this binary exports it.
    pub fn new(kind: Kind) -> Validator {
        Validator::from_schema(&schema(kind)).expect("exported schemas compile")
    }

    /// A validator for any draft 2020-12 schema (e.g. a checked-in file).
    pub fn from_schema(schema: &Value) -> Result<Validator, String> {
        jsonschema::draft202012::new(schema)
            .map(|inner| Validator { inner })
            .map_err(|e| e.to_string())
    }

    /// Every violation of `doc`, in the validator's order.
    pub fn violations(&self, doc: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        for e in self.inner.iter_errors(doc) {
            explain(&e, &mut out);
        }
        out
    }
}

/// One error as violations. An `anyOf`/`oneOf` that failed is explained by its one branch that
/// came close, so the pointer names the offending key rather than the whole alternative. A
/// branch is far when it fails only on the type of the value itself (an object where `null`
/// was the other choice) or on a `const`/`enum` (another PositionSpec `kind`).
fn explain(e: &jsonschema::ValidationError<'_>, out: &mut Vec<Violation>) {
    use jsonschema::error::ValidationErrorKind as K;
    if let K::AnyOf { context } | K::OneOfNotValid { context } = e.kind() {
        let at = e.instance_path().to_string();
        let far = |branch: &Vec<jsonschema::ValidationError<'static>>| {
            branch
                .iter()
                .any(|b| matches!(b.kind(), K::Constant { .. } | K::Enum { .. }))
                || branch.iter().all(|b| {
                    matches!(b.kind(), K::Type { .. }) && b.instance_path().to_string() == at
                })
        };
        let close: Vec<_> = context.iter().filter(|b| !far(b)).collect();
        if let [branch] = close[..] {
            for b in branch {
                explain(b, out);
            }
            return;
        }
    }
    out.push(Violation {
        pointer: e.instance_path().to_string(),
        message: e.to_string(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_facts_variant_is_a_subcommand() {
        let cli = crate::cli::Cli::command();
        for (cmd, _) in crate::commands::facts_schemas() {
            assert!(cli.find_subcommand(cmd).is_some(), "{cmd}");
        }
    }

    #[test]
    fn an_alternative_is_explained_by_the_branch_that_came_close() {
        let v = Validator::new(Kind::Selector);
        let bad = json!({"kind": "range", "path": "a.py", "start": [1, 2, 3], "end": [1, 4]});
        let found = v.violations(&bad);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/start");
        let ok = json!({"kind": "cursor", "path": "a.py", "line": 3, "col": 1});
        assert!(v.violations(&ok).is_empty());
    }
}
