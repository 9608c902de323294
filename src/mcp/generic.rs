//! Every MCP tool, made from the operations' catalog and its overlay
//! ([`crate::commands::overlay`]) by one code path: the tool is named after the operation
//! (`prepare-rename` → `prepare_rename`), titled and described by the overlay (with how to
//! address code when the operation takes a position), annotated by it or by `writes`, and its
//! input schema is the position (when the operation takes one), the operation's own arguments
//! under their batch-line keys (as the overlay adapts them: a diff as text, a JSON object, an
//! index or title; the envelope's knobs taken but not listed, [`overlay::UNLISTED`]), the
//! global options the overlay lets the call set, and the options every tool takes. A call becomes the batch line those keys spell. So a new operation is an MCP
//! tool the moment it is registered and has its overlay entry; no tool is declared twice.

use super::tools::{At, Call, Common, RewardOptions, Spec, ADDRESSING};
use crate::commands::catalog::{self, ArgInfo, OperationInfo, Takes, ValueType};
use crate::commands::overlay::{self, Adapt, ArgOverlay};
use serde_json::{json, Map, Value};
use std::path::Path;

/// The tool name of an operation.
pub fn tool_name(op: &str) -> String {
    op.replace('-', "_")
}

fn value_schema(a: &ArgInfo, over: Option<&ArgOverlay>) -> Value {
    let ty = match a.ty {
        ValueType::Boolean => "boolean",
        ValueType::Integer => "integer",
        ValueType::Number => "number",
        ValueType::String => "string",
    };
    let mut one = match over.map(|o| o.adapt) {
        Some(Adapt::Json) => json!({}),
        Some(Adapt::IndexOrTitle) => json!({ "type": ["integer", "string"] }),
        _ => json!({ "type": ty }),
    };
    if !a.values.is_empty() {
        one["enum"] = json!(a.values);
    }
    let mut s = match a.many {
        true => json!({ "type": "array", "items": one }),
        false => one,
    };
    let mut help = match over.map(|o| o.help).unwrap_or_default() {
        "" => a.help.clone(),
        h => h.to_string(),
    };
    if let Some(d) = &a.default {
        help.push_str(&format!(" (default {d})"));
    }
    s["description"] = json!(help);
    s
}

/// The shape of what is not the operation's own: the position (when it takes one) and the
/// options every tool takes.
fn base_schema(op: &OperationInfo) -> Value {
    match op.selector {
        Takes::None => super::tools::schema_of::<Common>(),
        _ => super::tools::schema_of::<At>(),
    }
}

/// The input schema of an operation's tool.
pub fn input_schema(op: &OperationInfo) -> Value {
    let mut base = base_schema(op);
    let props = base["properties"]
        .as_object_mut()
        .expect("an object schema");
    let mut required = Vec::new();
    for a in &op.args {
        let over = op.overlay.arg(&a.id);
        if over.is_none() && overlay::UNLISTED.contains(&a.id.as_str()) {
            continue;
        }
        props.insert(a.id.clone(), value_schema(a, over));
        if a.required {
            required.push(a.id.clone());
        }
    }
    let globals = super::tools::schema_of::<RewardOptions>();
    for g in op.overlay.globals {
        props.insert(g.to_string(), globals["properties"][g].clone());
    }
    if !required.is_empty() {
        base["required"] = json!(required);
    }
    if !op.overlay.examples.is_empty() {
        let examples: Vec<Value> = op
            .overlay
            .examples
            .iter()
            .filter_map(|e| serde_json::from_str(e).ok())
            .collect();
        base["examples"] = json!(examples);
    }
    base
}

/// `value` as the command line takes it, by the overlay's adaptation.
fn adapt(id: &str, adapt: Adapt, value: Value) -> Result<Value, String> {
    Ok(match (adapt, value) {
        (_, Value::Null) => Value::Null,
        (Adapt::Text, Value::String(text)) => json!(patch_file(&text)?),
        (Adapt::Text, other) => return Err(format!("{id} {other}: the text itself, a string")),
        (Adapt::Json, v) => json!(v.to_string()),
        (Adapt::IndexOrTitle, Value::Number(n)) => json!(n.to_string()),
        (Adapt::IndexOrTitle, v @ Value::String(_)) => v,
        (Adapt::IndexOrTitle, other) => return Err(format!("{id} {other}: an index or a title")),
        (_, v) => v,
    })
}

/// The batch line of a call of `op`'s tool.
pub fn build(op: &OperationInfo, arguments: Value, root: &Path) -> Result<Call, String> {
    let Value::Object(mut given) = (match arguments {
        Value::Null => json!({}),
        other => other,
    }) else {
        return Err("the arguments must be an object".into());
    };
    let mut args = Map::new();
    for o in op.overlay.args {
        // A former name is taken as the argument's own.
        for alias in o.aliases {
            if let Some(v) = given.remove(*alias) {
                if given.contains_key(o.id) {
                    return Err(format!(
                        "give `{}` or `{alias}` (its former name), not both",
                        o.id
                    ));
                }
                given.insert(o.id.to_string(), v);
            }
        }
        // A choice sets the flag its value names.
        let Adapt::Choice { picks } = o.adapt else {
            continue;
        };
        if let Some(v) = given.remove(o.id) {
            let chosen = v.as_str().map(|s| s.replace('-', "_"));
            let values: Vec<&str> = picks.iter().map(|p| p.value).collect();
            let pick = picks
                .iter()
                .find(|p| chosen.as_deref() == Some(p.value))
                .ok_or_else(|| format!("{} {v}: use {}", o.id, or_list(&values)))?;
            if let Some(flag) = pick.sets {
                args.insert(flag.to_string(), json!(true));
            }
        }
    }
    for a in &op.args {
        if let Some(v) = given.remove(&a.id) {
            let v = match op.overlay.arg(&a.id) {
                Some(o) => adapt(&a.id, o.adapt, v)?,
                None => v,
            };
            args.insert(a.id.clone(), v);
        }
    }
    let mut options = Map::new();
    for g in op.overlay.globals {
        if let Some(v) = given.remove(*g) {
            options.insert(g.to_string(), v);
        }
    }
    let options: RewardOptions = super::tools::parse(Value::Object(options))?;
    // Whatever is left must be a position or a common option: a misspelled argument is an
    // error, not silently dropped.
    let shape = base_schema(op);
    if let Some(k) = given
        .keys()
        .find(|k| shape["properties"].get(k.as_str()).is_none())
    {
        let ids: Vec<&str> = op.args.iter().map(|a| a.id.as_str()).collect();
        return Err(format!(
            "{} has no argument {k:?} (its own: {ids:?})",
            tool_name(&op.name)
        ));
    }
    let rest = Value::Object(given);
    let (selector, common) = match op.selector {
        Takes::None => (None, super::tools::parse::<Common>(rest)?),
        takes => {
            let p: At = super::tools::parse(rest)?;
            let named = p.pos.selector.is_some() || p.pos.file.is_some();
            let selector = match (takes, named) {
                (Takes::Optional, false) => None,
                _ => Some(super::tools::selector(&p.pos, root)?),
            };
            (selector, p.common)
        }
    };
    let mut call = super::tools::call(&op.name, selector, Value::Object(args), &common);
    call.globals.reward = options.reward;
    call.globals.tests = options.tests;
    call.globals.test_budget = options.test_budget;
    Ok(call)
}

/// `a, b or c`.
fn or_list(values: &[&str]) -> String {
    match values.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The text as a file named by its content (the SDK's `patch_file`: the same text, the same
/// path, so the same request and bundle from either route), which the warm daemon can read.
fn patch_file(text: &str) -> Result<String, String> {
    let dir = std::env::temp_dir().join("lanser-patches");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot write the patch: {e}"))?;
    let path = dir.join(format!(
        "{}.diff",
        crate::digest::sha256_hex(text.as_bytes())
    ));
    if !path.exists() {
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write the patch: {e}"))?;
    }
    Ok(path.to_string_lossy().into_owned())
}

/// A tool for every registered operation, in the overlay's order (one without an entry
/// last, by name).
pub fn tools() -> Vec<Spec> {
    let mut ops = catalog::operations();
    ops.sort_by_key(|op| {
        overlay::OVERLAYS
            .iter()
            .position(|o| o.op == op.name)
            .unwrap_or(usize::MAX)
    });
    ops.into_iter()
        .map(|op| {
            let description = match op.selector {
                Takes::None => op.description(),
                _ => format!("{} {ADDRESSING}", op.description()),
            };
            let hints = op.hints();
            Spec {
                name: tool_name(&op.name),
                title: op.title().to_string(),
                description,
                read_only: hints.read_only,
                destructive: hints.destructive,
                idempotent: hints.idempotent,
                cmd: op.name.clone(),
                schema: input_schema(&op),
                op,
            }
        })
        .collect()
}
