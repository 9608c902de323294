//! lanser's entry put into Codex's `config.toml` (`[mcp_servers.lanser]`) with `toml_edit`,
//! which keeps the file's comments, layout and every other table as they were.

use super::{holds, Change, Edited, Entry, Malformed, OWNED};
use serde_json::{Map, Value};
use toml_edit::{Array, DocumentMut, Item, Table};

/// `text` (empty when the file does not exist) with `mcp_servers.lanser` holding `entry`: an
/// existing lanser table gets lanser's own keys set (or removed), its other keys and
/// sub-tables kept.
pub fn upsert(text: &str, entry: &Entry) -> Result<Edited, Malformed> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| Malformed::new(one_line(&e.to_string())))?;
    let fresh = doc.as_table().is_empty();
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| Malformed::new("\"mcp_servers\" is not a table"))?;
    let Some(old) = servers.get_mut(super::NAME) else {
        let mut t = Table::new();
        if !fresh {
            t.decor_mut().set_prefix("\n");
        }
        for (k, v) in entry {
            t.insert(k, to_toml(v));
        }
        servers.insert(super::NAME, Item::Table(t));
        return Ok(Edited {
            text: doc.to_string(),
            change: Change::Added,
        });
    };
    let Some(table) = old.as_table_like_mut() else {
        return Err(Malformed::new("\"mcp_servers.lanser\" is not a table"));
    };
    let was = owned_of(table);
    if holds(&was, entry) {
        return Ok(Edited {
            text: text.to_string(),
            change: Change::Same,
        });
    }
    for key in OWNED {
        match entry.iter().find(|(k, _)| *k == key).map(|(_, v)| v) {
            Some(v) => {
                table.insert(key, to_toml(v));
            }
            None => {
                table.remove(key);
            }
        }
    }
    Ok(Edited {
        text: doc.to_string(),
        change: Change::Replaced {
            was: Value::Object(was).to_string(),
        },
    })
}

/// lanser's own keys of an existing table, as JSON (a value that is neither a string nor a
/// list of strings shows as its TOML text, so that it differs from anything lanser writes).
fn owned_of(table: &dyn toml_edit::TableLike) -> Map<String, Value> {
    let mut out = Map::new();
    for key in OWNED {
        let Some(item) = table.get(key) else { continue };
        let value = match item.as_value() {
            Some(toml_edit::Value::String(s)) => Value::String(s.value().clone()),
            Some(toml_edit::Value::Array(a)) if a.iter().all(|v| v.as_str().is_some()) => {
                Value::Array(
                    a.iter()
                        .map(|v| Value::String(v.as_str().unwrap_or_default().to_string()))
                        .collect(),
                )
            }
            _ => Value::String(item.to_string().trim().to_string()),
        };
        out.insert(key.to_string(), value);
    }
    out
}

fn to_toml(v: &Value) -> Item {
    match v {
        Value::Array(items) => {
            let mut a = Array::new();
            for s in items {
                a.push(s.as_str().unwrap_or_default());
            }
            toml_edit::value(a)
        }
        other => toml_edit::value(other.as_str().unwrap_or_default()),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Entry {
        vec![
            ("command", json!("/bin/lanser")),
            ("args", json!(["mcp", "--workspace", "/w"])),
        ]
    }

    #[test]
    fn added_after_the_rest_which_keeps_its_bytes() {
        let text = "# mine\nmodel = \"o3\"  # pinned\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let out = upsert(text, &entry()).unwrap();
        assert_eq!(
            out.text,
            format!(
                "{text}\n[mcp_servers.lanser]\ncommand = \"/bin/lanser\"\nargs = [\"mcp\", \"--workspace\", \"/w\"]\n"
            )
        );
        assert!(matches!(
            upsert(&out.text, &entry()).unwrap().change,
            Change::Same
        ));
        let fresh = upsert("", &entry()).unwrap();
        assert!(
            fresh.text.starts_with("[mcp_servers.lanser]\n"),
            "{}",
            fresh.text
        );
    }

    #[test]
    fn a_different_entry_is_replaced_keeping_its_other_keys() {
        let text = "[mcp_servers.lanser]\nurl = \"http://x/mcp\"\nstartup_timeout_sec = 30\n\n[mcp_servers.lanser.env]\nA = \"1\"\n";
        let out = upsert(text, &entry()).unwrap();
        assert_eq!(
            out.text,
            "[mcp_servers.lanser]\nstartup_timeout_sec = 30\ncommand = \"/bin/lanser\"\nargs = [\"mcp\", \"--workspace\", \"/w\"]\n\n[mcp_servers.lanser.env]\nA = \"1\"\n"
        );
        assert!(matches!(out.change, Change::Replaced { .. }));
        assert!(upsert("mcp_servers = 3\n", &entry()).is_err());
        let inline = "mcp_servers = { other = { command = \"x\" } }\n";
        let out = upsert(inline, &entry()).unwrap();
        assert_eq!(
            out.text,
            "mcp_servers = { other = { command = \"x\" } , lanser = { command = \"/bin/lanser\", args = [\"mcp\", \"--workspace\", \"/w\"] } }\n"
        );
        assert!(matches!(
            upsert(&out.text, &entry()).unwrap().change,
            Change::Same
        ));
        assert!(upsert("[mcp_servers\n", &entry()).is_err());
    }
}
