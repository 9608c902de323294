//! Each tool's `outputSchema`: a compact, self-contained outline of the Analysis Bundle that
//! tool answers with, derived from the bundle schema (`lanser schema bundle`).
//!
//! Every MCP client must be able to list and use it, so the outline keeps to what every SDK
//! reads the same way: an object schema whose properties are object schemas (never the
//! boolean schema `true`, which the TypeScript SDK's result type rejects), no `$ref`, no
//! `$defs`, no `$id` (Ajv, the TypeScript SDK's validator, caches a schema by its `$id`, and
//! 33 different schemas sharing one would collide), no `$schema` (Ajv's default dialect is
//! draft-07), only the keywords draft-07 and 2020-12 read alike (`type`, `properties`,
//! `required`, `items`, `enum`, `description`).
//!
//! It is an outline, not the contract: each node keeps its type (and, two levels into the
//! tool's own facts, its properties and their descriptions), and every constraint it drops only widens what it
//! accepts, so a bundle valid against the full schema is valid against the outline. The full
//! schema, with every constraint, is `lanser schema bundle` (`schemas/bundle.schema.json`),
//! which the outline's description names. That keeps `tools/list` small: the bundle schema's
//! `$defs` on every tool made it 911 KB for 32 tools; the outlines take a few KB each.

use serde_json::{json, Map, Value};

/// How deep into the tool's own facts the outline names properties.
const FACTS_DEPTH: usize = 2;

/// Longest enum the outline spells out; a longer one keeps only its type.
const MAX_ENUM: usize = 12;

/// The outline of the bundle `cmd` answers with (its facts, or `null` in an error bundle).
pub fn for_cmd(full: &Map<String, Value>, cmd: &str) -> Map<String, Value> {
    let facts = facts_of(full, cmd);
    let mut out = envelope(full, facts.as_ref());
    out.insert(
        "description".into(),
        json!(format!(
            "An Analysis Bundle of `{cmd}` (outline; the full schema is `lanser schema bundle`)"
        )),
    );
    out
}

/// The outline of any bundle, whatever its operation (the `batch` tool's items).
pub fn any_bundle(full: &Map<String, Value>) -> Map<String, Value> {
    envelope(full, None)
}

/// The bundle's members, each outlined; `facts` from `facts` when given, else any object.
fn envelope(full: &Map<String, Value>, facts: Option<&Value>) -> Map<String, Value> {
    let defs = full.get("$defs").and_then(Value::as_object);
    let outline = Outline { defs };
    let mut props = Map::new();
    if let Some(Value::Object(members)) = full.get("properties") {
        for (name, schema) in members {
            let o = match (name.as_str(), facts) {
                ("facts", Some(f)) => with_null(outline.node(f, FACTS_DEPTH)),
                ("facts", None) => json!({"type": ["object", "null"]}),
                // The other members are the same on every tool: their types only.
                _ => {
                    let mut o = outline.node(schema, 0);
                    if let Some(m) = o.as_object_mut() {
                        m.remove("description");
                    }
                    o
                }
            };
            props.insert(name.clone(), o);
        }
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(props));
    if let Some(r) = full.get("required") {
        out.insert("required".into(), r.clone());
    }
    out
}

/// The schema of `cmd`'s facts: the `then` of the bundle schema's branch for that command.
fn facts_of(full: &Map<String, Value>, cmd: &str) -> Option<Value> {
    let Some(Value::Array(all)) = full.get("allOf") else {
        return None;
    };
    all.iter()
        .find(|b| b.pointer("/if/properties/request/properties/cmd/const") == Some(&json!(cmd)))
        .and_then(|b| b.pointer("/then/properties/facts"))
        .cloned()
}

/// `schema` that also accepts `null`.
fn with_null(mut schema: Value) -> Value {
    match schema.get_mut("type") {
        Some(Value::String(t)) => {
            let t = t.clone();
            schema["type"] = json!([t, "null"]);
        }
        Some(Value::Array(ts)) if !ts.contains(&json!("null")) => ts.push(json!("null")),
        _ => {}
    }
    schema
}

/// Outlines nodes of the bundle schema, resolving its `$ref`s against its `$defs`.
struct Outline<'a> {
    defs: Option<&'a Map<String, Value>>,
}

impl Outline<'_> {
    /// `schema` resolved, with its type and description, and its properties or items
    /// outlined `depth` levels further.
    fn node(&self, schema: &Value, depth: usize) -> Value {
        let schema = self.resolve(schema);
        let Value::Object(m) = schema else {
            // `true` (anything) or `false`: an outline accepts anything.
            return json!({});
        };
        let mut out = Map::new();
        if let Some(d) = m.get("description") {
            out.insert("description".into(), d.clone());
        }
        let types = self.types(schema);
        if let Some(t) = &types {
            out.insert(
                "type".into(),
                match t.as_slice() {
                    [one] => json!(one),
                    many => json!(many),
                },
            );
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            if e.len() <= MAX_ENUM {
                out.insert("enum".into(), Value::Array(e.clone()));
            }
        }
        if depth == 0 {
            return Value::Object(out);
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            let props: Map<String, Value> = props
                .iter()
                .map(|(k, v)| (k.clone(), self.node(v, depth - 1)))
                .collect();
            out.insert("properties".into(), Value::Object(props));
            if let Some(r) = m.get("required") {
                out.insert("required".into(), r.clone());
            }
        }
        if let Some(items) = m.get("items").filter(|i| i.is_object()) {
            out.insert("items".into(), self.node(items, depth - 1));
        }
        Value::Object(out)
    }

    /// The JSON types `schema` allows, or `None` when it does not say (any value).
    fn types(&self, schema: &Value) -> Option<Vec<String>> {
        let schema = self.resolve(schema);
        let m = schema.as_object()?;
        if let Some(t) = m.get("type") {
            return match t {
                Value::String(s) => Some(vec![s.clone()]),
                Value::Array(a) => Some(
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(str::to_string)
                        .collect(),
                ),
                _ => None,
            };
        }
        let alternatives = m.get("anyOf").or_else(|| m.get("oneOf"))?.as_array()?;
        let mut all: Vec<String> = Vec::new();
        for a in alternatives {
            for t in self.types(a)? {
                if !all.contains(&t) {
                    all.push(t);
                }
            }
        }
        Some(all)
    }

    /// `schema` with its `$ref`s followed (a `$ref` beside other keywords is followed too: the
    /// keywords beside it only narrow, which an outline may drop).
    fn resolve<'s>(&'s self, mut schema: &'s Value) -> &'s Value {
        for _ in 0..16 {
            let Some(name) = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
            else {
                break;
            };
            match self.defs.and_then(|d| d.get(name)) {
                Some(def) => schema = def,
                None => break,
            }
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Map<String, Value> {
        let s = crate::schema::schema(crate::schema::Kind::Bundle);
        s.as_object().cloned().unwrap()
    }

    /// Walks a schema: every `properties` member and `items` is an object schema, and no
    /// keyword outside the outline's set appears.
    fn check_node(path: &str, v: &Value) {
        let Value::Object(m) = v else {
            panic!("{path}: not an object schema: {v}");
        };
        for k in m.keys() {
            assert!(
                [
                    "type",
                    "properties",
                    "required",
                    "items",
                    "enum",
                    "description"
                ]
                .contains(&k.as_str()),
                "{path}: keyword {k}"
            );
        }
        if let Some(p) = m.get("properties") {
            for (k, x) in p.as_object().unwrap() {
                check_node(&format!("{path}.{k}"), x);
            }
        }
        if let Some(i) = m.get("items") {
            check_node(&format!("{path}[]"), i);
        }
    }

    /// Every tool's outline is one every SDK takes: an object schema of object schemas, no
    /// `$ref`/`$id`/`$schema`, and it names the facts of its own operation.
    #[test]
    fn every_outline_is_an_object_schema_of_object_schemas() {
        let full = full();
        for spec in crate::mcp::tools::all() {
            let o = Value::Object(for_cmd(&full, &spec.cmd));
            assert_eq!(o["type"], "object", "{}", spec.name);
            let mut m = o.as_object().unwrap().clone();
            m.remove("description");
            check_node(&spec.name, &Value::Object(m));
            assert!(o["required"].as_array().unwrap().contains(&json!("facts")));
        }
        let def = for_cmd(&full, "def");
        assert_eq!(
            def["properties"]["facts"]["properties"]["definitions"]["type"],
            "array"
        );
        assert_eq!(
            def["properties"]["facts"]["type"],
            json!(["object", "null"])
        );
    }

    /// Outlines accept what the full schema accepts: a bundle the full schema validates is
    /// valid against its outline, and one of another operation's facts shape is not
    /// accepted where the outline can tell (a missing required fact).
    #[test]
    fn an_outline_accepts_the_bundles_the_full_schema_accepts() {
        let full = full();
        let def = Value::Object(for_cmd(&full, "def"));
        let outline = jsonschema::validator_for(&def).unwrap();
        // A bundle `lanser def --json` printed (a file that does not exist), valid against the
        // full schema.
        let error = json!({
            "bundleId": format!("sha256:{}", "a".repeat(64)), "capabilities": {},
            "edits": {"diff": null, "workspaceEdit": null},
            "environment": {"configDigest": format!("sha256:{}", "c".repeat(64)),
                "platform": "linux-x86_64", "positionEncoding": "utf-16",
                "python": {"exe": "/usr/bin/python3", "venv": null, "version": "3.11.7"},
                "server": null},
            "error": {"code": "E/NOT_FOUND", "message": "file nosuch.py does not exist",
                "retryable": false},
            "facts": null,
            "meta": {"complete": true, "cursor": null, "docVersions": {}, "exit_code": 3,
                "hashing": {"algo": "sha256-jcs-v1", "excluded": ["meta.timing"]},
                "sorting_keys": ["path"], "truncated": false},
            "processReward": null,
            "request": {"args": {}, "cmd": "def", "indexIo": "codepoint",
                "selector": {"col": 1, "kind": "cursor", "line": 1, "path": "nosuch.py"}},
            "resolution": null, "status": "error", "version": "1.2",
        });
        let whole = jsonschema::validator_for(&Value::Object(full.clone())).unwrap();
        assert!(whole.is_valid(&error), "{:?}", whole.validate(&error).err());
        assert!(
            outline.is_valid(&error),
            "{:?}",
            outline.validate(&error).err()
        );
        let mut ok = error.clone();
        ok["status"] = json!("ok");
        ok["error"] = Value::Null;
        ok["meta"]["exit_code"] = json!(0);
        ok["facts"] = json!({"provenance": "lsp"});
        assert!(!outline.is_valid(&ok), "definitions are required");
        ok["facts"]["definitions"] = json!([]);
        assert!(whole.is_valid(&ok), "{:?}", whole.validate(&ok).err());
        assert!(outline.is_valid(&ok));
    }
}
