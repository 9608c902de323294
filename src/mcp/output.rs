//! Each tool's `outputSchema`: the Analysis Bundle's schema narrowed to the one operation the
//! tool asks — its facts' branch of the bundle schema's `allOf` and only the `$defs` that
//! branch reaches. The whole bundle schema on every tool made `tools/list` 1.7 MB for 32 tools
//! (more than the official client's 1 MiB event limit over HTTP, and context an agent pays for).

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The bundle schema (`full`) with only the facts of `cmd` (and the generic conditions).
pub fn for_cmd(full: &Map<String, Value>, cmd: &str) -> Map<String, Value> {
    let mut out = full.clone();
    if let Some(Value::Array(all)) = out.get_mut("allOf") {
        all.retain(
            |branch| match branch.pointer("/if/properties/request/properties/cmd/const") {
                Some(c) => c == cmd,
                None => true,
            },
        );
        // The "ok means one of these commands" condition, narrowed to this one.
        for branch in all.iter_mut() {
            if let Some(e) = branch.pointer_mut("/then/properties/request/properties/cmd/enum") {
                *e = Value::Array(vec![Value::String(cmd.to_string())]);
            }
        }
    }
    prune_defs(&mut out);
    out
}

/// Keep only the `$defs` reachable by `$ref` from the rest of the schema.
fn prune_defs(schema: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.remove("$defs") else {
        return;
    };
    let mut keep = BTreeSet::new();
    let mut todo = Vec::new();
    refs(&Value::Object(schema.clone()), &mut todo);
    while let Some(name) = todo.pop() {
        if keep.insert(name.clone()) {
            if let Some(def) = defs.get(&name) {
                refs(def, &mut todo);
            }
        }
    }
    let kept: Map<String, Value> = defs.into_iter().filter(|(k, _)| keep.contains(k)).collect();
    if !kept.is_empty() {
        schema.insert("$defs".into(), Value::Object(kept));
    }
}

/// The `$defs` names every `"$ref": "#/$defs/NAME"` in `v` points at.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix("#/$defs/") {
                            out.push(name.to_string());
                        }
                    }
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tool's schema has its own facts and none of another operation's, and every
    /// `$ref` it keeps resolves.
    #[test]
    fn a_tools_schema_is_its_operations_bundle() {
        let full = crate::schema::schema(crate::schema::Kind::Bundle);
        let full = full.as_object().unwrap();
        let def = for_cmd(full, "def");
        let text = serde_json::to_string(&def).unwrap();
        assert!(
            text.len() * 2 < serde_json::to_string(full).unwrap().len(),
            "{}",
            text.len()
        );
        let branches = def["allOf"].as_array().unwrap();
        let cmds: Vec<&Value> = branches
            .iter()
            .filter_map(|b| b.pointer("/if/properties/request/properties/cmd/const"))
            .collect();
        assert_eq!(cmds, vec!["def"]);
        let mut names = Vec::new();
        refs(&Value::Object(def.clone()), &mut names);
        let defs = def["$defs"].as_object().unwrap();
        for n in names {
            assert!(defs.contains_key(&n), "{n} unresolved");
        }
        // A bundle `lanser def --json` could print validates against it.
        assert!(defs.keys().any(|k| k.contains("ErrorObj")));
    }
}
