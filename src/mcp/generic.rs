//! MCP tools made from the operations' catalog, for every operation without a hand-written
//! tool in [`super::tools`]: the tool is named after the operation (`prepare-rename` →
//! `prepare_rename`), its description is the CLI's, its input schema is the position (when
//! the operation takes one), the operation's own arguments under their batch-line keys, and
//! the options every tool takes; a call becomes the batch line those keys spell. So a new
//! operation is an MCP tool the moment it is registered.

use super::tools::{Build, Common, Position, Spec, ADDRESSING};
use crate::commands::catalog::{self, ArgInfo, OperationInfo, Takes, ValueType};
use serde_json::{json, Map, Value};
use std::path::Path;

/// The tool name of an operation.
pub fn tool_name(op: &str) -> String {
    op.replace('-', "_")
}

fn value_schema(a: &ArgInfo) -> Value {
    let ty = match a.ty {
        ValueType::Boolean => "boolean",
        ValueType::Integer => "integer",
        ValueType::Number => "number",
        ValueType::String => "string",
    };
    let mut one = json!({ "type": ty });
    if !a.values.is_empty() {
        one["enum"] = json!(a.values);
    }
    let mut s = match a.many {
        true => json!({ "type": "array", "items": one }),
        false => one,
    };
    let mut help = a.help.clone();
    if let Some(d) = &a.default {
        help.push_str(&format!(" (default {d})"));
    }
    s["description"] = json!(help);
    s
}

/// The input schema of an operation's tool.
pub fn input_schema(op: &OperationInfo) -> Value {
    let mut base = match op.selector {
        Takes::None => super::tools::schema_of::<Common>(),
        _ => super::tools::schema_of::<Positioned>(),
    };
    let props = base["properties"]
        .as_object_mut()
        .expect("an object schema");
    let mut required = Vec::new();
    for a in &op.args {
        props.insert(a.id.clone(), value_schema(a));
        if a.required {
            required.push(a.id.clone());
        }
    }
    if !required.is_empty() {
        base["required"] = json!(required);
    }
    base
}

/// A position plus the common options (the shape of a position-taking tool).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct Positioned {
    #[serde(flatten)]
    pub pos: Position,
    #[serde(flatten)]
    pub common: Common,
}

/// The batch line of a call of `op`'s tool.
pub fn build(
    op: &OperationInfo,
    arguments: Value,
    root: &Path,
) -> Result<super::tools::Call, String> {
    let Value::Object(mut given) = (match arguments {
        Value::Null => json!({}),
        other => other,
    }) else {
        return Err("the arguments must be an object".into());
    };
    let mut args = Map::new();
    for a in &op.args {
        if let Some(v) = given.remove(&a.id) {
            args.insert(a.id.clone(), v);
        }
    }
    // Whatever is left must be a position or a common option: a misspelled argument is an
    // error, not silently dropped.
    let shape = match op.selector {
        Takes::None => super::tools::schema_of::<Common>(),
        _ => super::tools::schema_of::<Positioned>(),
    };
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
            let p: Positioned = super::tools::parse(rest)?;
            let named = p.pos.selector.is_some() || p.pos.file.is_some();
            let selector = match (takes, named) {
                (Takes::Optional, false) => None,
                _ => Some(super::tools::selector(&p.pos, root)?),
            };
            (selector, p.common)
        }
    };
    Ok(super::tools::call(
        &op.name,
        selector,
        Value::Object(args),
        &common,
    ))
}

/// A tool for every registered operation that `curated` has no tool for.
pub fn tools(curated: &[Spec]) -> Vec<Spec> {
    catalog::operations()
        .into_iter()
        .filter(|op| !curated.iter().any(|s| s.cmd == op.name))
        .map(|op| {
            let description = match op.selector {
                Takes::None => format!("{}.", op.about),
                _ => format!("{}. {ADDRESSING}", op.about),
            };
            Spec {
                name: tool_name(&op.name),
                title: op.about.clone(),
                description,
                read_only: !op.writes,
                destructive: op.writes,
                idempotent: !op.writes,
                cmd: op.name.clone(),
                schema: input_schema(&op),
                build: Build::Generic(op),
            }
        })
        .collect()
}
