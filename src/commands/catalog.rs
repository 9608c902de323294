//! The operations' catalog: what each registered operation takes, read from its clap
//! definition and the registry, with its overlay ([`super::overlay`]: title, curated
//! description, annotations, examples, the arguments an agent gives otherwise) — the one
//! source that every MCP tool and every Python SDK method (`lanser schema operations`, copied
//! into the package as `_operations.json`) are made from.

use super::overlay::{self, Hints, Overlay};
use super::{facts_paged, Words};
use clap::{ArgAction, CommandFactory};
use serde::Serialize;
use std::any::TypeId;

/// Whether an operation names a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Takes {
    Required,
    Optional,
    None,
}

/// What a value of an argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    Boolean,
    Integer,
    Number,
    String,
}

/// One argument of an operation (the selector is not one: see [`OperationInfo::selector`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgInfo {
    /// The key a batch line's `args` (and an MCP call) gives it by: clap's id, snake_case.
    pub id: String,
    /// Its `--long` flag, when it is not positional.
    pub long: Option<String>,
    pub positional: bool,
    pub required: bool,
    /// Whether it takes several values (a list).
    pub many: bool,
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// The values it accepts, when clap lists them.
    pub values: Vec<String>,
    pub default: Option<String>,
    pub help: String,
}

/// One operation, as the other routes see it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationInfo {
    /// `request.cmd` and the CLI subcommand.
    pub name: String,
    /// Its one-line description (the CLI's help).
    pub about: String,
    pub selector: Takes,
    /// Whether it can write files (it has `--apply`).
    pub writes: bool,
    /// The facts list that pages, if any.
    pub paged: Option<&'static str>,
    pub args: Vec<ArgInfo>,
    /// What its MCP tool and SDK method add ([`super::overlay`]).
    pub overlay: Overlay,
}

impl OperationInfo {
    /// Its MCP annotations: the overlay's, or what `writes` implies.
    pub fn hints(&self) -> Hints {
        self.overlay
            .hints
            .unwrap_or_else(|| Hints::of_writes(self.writes))
    }

    /// Its title (the overlay's; the CLI's help for an operation without one).
    pub fn title(&self) -> &str {
        match self.overlay.title {
            "" => &self.about,
            t => t,
        }
    }

    /// Its description for an agent: the overlay's, or the CLI's help as a sentence.
    pub fn description(&self) -> String {
        match self.overlay.description {
            "" => format!("{}.", self.about),
            d => d.to_string(),
        }
    }
}

fn value_type(a: &clap::Arg) -> ValueType {
    if matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) {
        return ValueType::Boolean;
    }
    let t = a.get_value_parser().type_id();
    let ints = [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
    ];
    if ints.iter().any(|i| t == *i) {
        ValueType::Integer
    } else if t == TypeId::of::<f64>() || t == TypeId::of::<f32>() {
        ValueType::Number
    } else {
        ValueType::String
    }
}

fn arg_info(a: &clap::Arg) -> ArgInfo {
    let many = matches!(a.get_action(), ArgAction::Append)
        || a.get_num_args().is_some_and(|n| n.max_values() > 1);
    ArgInfo {
        id: a.get_id().to_string(),
        long: a.get_long().map(str::to_string),
        positional: a.is_positional(),
        required: a.is_required_set(),
        many,
        ty: value_type(a),
        values: match value_type(a) {
            ValueType::Boolean => Vec::new(),
            _ => a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect(),
        },
        default: a
            .get_default_values()
            .first()
            .map(|v| v.to_string_lossy().into_owned())
            .filter(|_| !matches!(a.get_action(), ArgAction::SetTrue)),
        help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
    }
}

/// Every registered operation, by name.
pub fn operations() -> Vec<OperationInfo> {
    let cli = Words::command();
    let mut out: Vec<OperationInfo> = cli
        .get_subcommands()
        .map(|sub| {
            let args: Vec<&clap::Arg> = sub
                .get_arguments()
                .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
                .collect();
            let selector = match args.iter().find(|a| a.get_id() == "selector") {
                Some(a) if a.is_required_set() => Takes::Required,
                Some(_) => Takes::Optional,
                None => Takes::None,
            };
            let name = sub.get_name().to_string();
            OperationInfo {
                overlay: overlay::of(&name).copied().unwrap_or(Overlay {
                    op: "",
                    title: "",
                    description: "",
                    hints: None,
                    examples: &[],
                    args: &[],
                    sdk_params: &[],
                    globals: &[],
                }),
                name,
                about: sub.get_about().map(|h| h.to_string()).unwrap_or_default(),
                selector,
                writes: args.iter().any(|a| a.get_id() == "apply"),
                paged: facts_paged(sub.get_name()),
                args: args
                    .iter()
                    .filter(|a| a.get_id() != "selector")
                    .map(|a| arg_info(a))
                    .collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The catalog as exported: pretty JSON with a final newline.
pub fn render() -> String {
    let mut s = serde_json::to_string_pretty(&operations()).expect("the catalog serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_reads_the_clap_definitions() {
        let ops = operations();
        let by = |n: &str| ops.iter().find(|o| o.name == n).unwrap();
        let refs = by("refs");
        assert_eq!(refs.selector, Takes::Required);
        assert_eq!(refs.paged, Some("references"));
        let flag = &refs.args[0];
        assert_eq!(
            (flag.id.as_str(), flag.ty),
            ("exclude_declaration", ValueType::Boolean)
        );
        let impact = by("impact");
        assert_eq!(impact.selector, Takes::Optional);
        let depth = impact.args.iter().find(|a| a.id == "depth").unwrap();
        assert_eq!(
            (depth.ty, depth.default.as_deref()),
            (ValueType::Integer, Some("3"))
        );
        let rename = by("rename");
        assert!(rename.writes && !by("def").writes);
        let mode = rename.args.iter().find(|a| a.id == "apply_mode").unwrap();
        assert_eq!(mode.values, ["direct", "git"]);
        assert!(rename.args.iter().any(|a| a.id == "allow" && a.many));
        assert_eq!(by("status").selector, Takes::None);
    }

    /// Every operation has an overlay entry, every entry is an operation's, and each of its
    /// arguments is the operation's own (or a choice setting the operation's own flags).
    #[test]
    fn the_overlay_covers_the_registry() {
        let ops = operations();
        for op in &ops {
            let o = overlay::of(&op.name)
                .unwrap_or_else(|| panic!("{} has no entry in commands/overlay.rs", op.name));
            assert!(!o.title.is_empty(), "{} has no title", op.name);
            let ids: Vec<&str> = op.args.iter().map(|a| a.id.as_str()).collect();
            let flag = |id: &str| {
                op.args
                    .iter()
                    .any(|a| a.id == id && a.ty == ValueType::Boolean)
            };
            for a in o.args {
                match a.adapt {
                    overlay::Adapt::Choice { picks } => {
                        assert!(
                            !ids.contains(&a.id),
                            "{}: choice {} is an id",
                            op.name,
                            a.id
                        );
                        for p in picks {
                            assert!(p.sets.is_none_or(flag), "{}: {:?}", op.name, p);
                        }
                    }
                    _ => assert!(ids.contains(&a.id), "{}: no argument {}", op.name, a.id),
                }
                for alias in a.aliases {
                    assert!(!ids.contains(alias), "{}: alias {alias} is an id", op.name);
                }
            }
            for p in o.sdk_params {
                let p = p.trim_start_matches('*');
                assert!(
                    ids.contains(&p) || o.arg(p).is_some(),
                    "{}: SDK parameter {p}",
                    op.name
                );
            }
            for e in o.examples {
                let v: serde_json::Value = serde_json::from_str(e).unwrap();
                assert!(v.is_object(), "{}: example {e}", op.name);
            }
        }
        for o in overlay::OVERLAYS {
            assert!(
                ops.iter().any(|op| op.name == o.op),
                "overlay {} names no operation",
                o.op
            );
        }
        assert_eq!(
            overlay::OVERLAYS.len(),
            ops.len(),
            "one entry per operation"
        );
    }
}
