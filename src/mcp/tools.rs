//! The MCP tool table: one tool per lanser action, its description for a model, its
//! annotations, its arguments (typed: the same struct deserializes a call and generates the
//! tool's input schema), and how a call becomes a `lanser batch` request line plus the global
//! options it sets (typed: applied to the server's own, never parsed as words).

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
    pub build: Build,
}

/// How a call becomes a request line.
pub enum Build {
    /// A hand-written tool's own arguments.
    Curated(fn(Value, &Path) -> Result<Call, String>),
    /// The operation's own arguments, from the catalog ([`super::generic`]).
    Generic(crate::commands::catalog::OperationInfo),
}

impl Spec {
    /// The request line (and options) for a call with `arguments`, or why it is not one.
    pub fn call(&self, arguments: Value, root: &Path) -> Result<Call, String> {
        match &self.build {
            Build::Curated(f) => f(arguments, root),
            Build::Generic(op) => super::generic::build(op, arguments, root),
        }
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

fn at(cmd: &'static str) -> impl Fn(Value, &Path) -> Result<Call, String> {
    move |a, root| {
        let a: At = parse(a)?;
        Ok(call(
            cmd,
            Some(selector(&a.pos, root)?),
            json!({}),
            &a.common,
        ))
    }
}

fn write_flags(w: &Write) -> Value {
    json!({"apply": w.apply, "allow-dirty": w.allow_dirty})
}

macro_rules! position_tool {
    ($fn:ident, $cmd:literal) => {
        fn $fn(a: Value, root: &Path) -> Result<Call, String> {
            at($cmd)(a, root)
        }
    };
}
position_tool!(def, "def");
position_tool!(type_def, "type-def");
position_tool!(declaration, "decl");
position_tool!(hover, "hover");
position_tool!(implementation, "impl");
position_tool!(highlight, "highlight");
position_tool!(signature, "signature");

fn refs(a: Value, root: &Path) -> Result<Call, String> {
    let a: Refs = parse(a)?;
    let flags = json!({"exclude-declaration": a.exclude_declaration});
    Ok(call(
        "refs",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn symbols(a: Value, _: &Path) -> Result<Call, String> {
    let a: Symbols = parse(a)?;
    if a.file.is_none() && a.query.is_none() {
        return Err("give `file` (an outline) or `query` (a workspace search)".into());
    }
    let flags = json!({"file": a.file, "query": a.query});
    Ok(call("symbols", None, flags, &a.common))
}

fn diagnostics(a: Value, _: &Path) -> Result<Call, String> {
    let a: Diagnostics = parse(a)?;
    let flags = match a.targets.is_empty() {
        true => json!({}),
        false => json!({"targets": a.targets}),
    };
    Ok(call("diag", None, flags, &a.common))
}

fn calls(a: Value, root: &Path) -> Result<Call, String> {
    let a: Calls = parse(a)?;
    let flags = match a.direction.as_deref().unwrap_or("both") {
        "both" => json!({}),
        "incoming" => json!({"incoming": true}),
        "outgoing" => json!({"outgoing": true}),
        other => {
            return Err(format!(
                "direction {other:?}: use incoming, outgoing or both"
            ))
        }
    };
    Ok(call(
        "calls",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn locate(a: Value, root: &Path) -> Result<Call, String> {
    let a: Locate = parse(a)?;
    let flags = json!({"preview": a.preview});
    Ok(call(
        "locate",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn rename(a: Value, root: &Path) -> Result<Call, String> {
    let a: Rename = parse(a)?;
    let mut flags = write_flags(&a.write);
    flags["new_name"] = json!(a.new_name);
    Ok(call(
        "rename",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn rename_file(a: Value, _: &Path) -> Result<Call, String> {
    let a: RenameFile = parse(a)?;
    let mut flags = write_flags(&a.write);
    flags["src"] = json!(a.src);
    flags["dst"] = json!(a.dst);
    Ok(call("rename-file", None, flags, &a.common))
}

fn code_actions(a: Value, root: &Path) -> Result<Call, String> {
    let a: CodeActions = parse(a)?;
    let pick = match &a.apply {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => return Err(format!("apply {other}: an index or a title")),
    };
    let flags = json!({
        "kind": a.kind,
        "apply": pick,
        "dry-run": a.dry_run && pick.is_some(),
        "allow-dirty": a.allow_dirty,
    });
    Ok(call(
        "code-actions",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

/// The diff as a file named by its content (the SDK's `patch_file`: the same diff, the same
/// path, so the same request and bundle from either route), which the warm daemon can read.
fn patch_file(diff: &str) -> Result<String, String> {
    let dir = std::env::temp_dir().join("lanser-patches");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot write the patch: {e}"))?;
    let path = dir.join(format!(
        "{}.diff",
        crate::digest::sha256_hex(diff.as_bytes())
    ));
    if !path.exists() {
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, diff)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write the patch: {e}"))?;
    }
    Ok(path.to_string_lossy().into_owned())
}

fn check_patch(a: Value, _: &Path) -> Result<Call, String> {
    let a: CheckPatch = parse(a)?;
    let mut c = call(
        "check",
        None,
        json!({"patch": patch_file(&a.patch)?}),
        &a.common,
    );
    c.globals.reward = a.reward;
    c.globals.tests = a.tests;
    c.globals.test_budget = a.test_budget;
    Ok(c)
}

fn apply_patch(a: Value, _: &Path) -> Result<Call, String> {
    let a: ApplyPatch = parse(a)?;
    let mut flags = write_flags(&a.write);
    flags["patch"] = json!(patch_file(&a.patch)?);
    flags["require-clean"] = json!(a.require_clean);
    Ok(call("apply", None, flags, &a.common))
}

fn edit(a: Value, root: &Path) -> Result<Call, String> {
    let a: Edit = parse(a)?;
    let modes = [
        "replace-body",
        "replace",
        "insert-before",
        "insert-after",
        "delete",
    ];
    let mode = a.mode.replace('_', "-");
    if !modes.contains(&mode.as_str()) {
        return Err(format!(
            "mode {:?}: use replace_body, replace, insert_before, insert_after or delete",
            a.mode
        ));
    }
    let mut flags = write_flags(&a.write);
    flags[mode.as_str()] = json!(true);
    if let Some(text) = &a.text {
        flags["text"] = json!(patch_file(text)?);
    }
    flags["force"] = json!(a.force);
    flags["require-clean"] = json!(a.require_clean);
    Ok(call(
        "edit",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn impact(a: Value, root: &Path) -> Result<Call, String> {
    let a: Impact = parse(a)?;
    let given = a.pos.selector.is_some() || a.pos.file.is_some();
    let depth = a.depth.map(|d| json!(d));
    match (a.patch, given) {
        (Some(p), false) => Ok(call(
            "impact",
            None,
            json!({"patch": patch_file(&p)?, "depth": depth}),
            &a.common,
        )),
        (None, true) => Ok(call(
            "impact",
            Some(selector(&a.pos, root)?),
            json!({"depth": depth}),
            &a.common,
        )),
        _ => Err("give either a position (`selector`, or `file`/`line`) or a `patch`".into()),
    }
}

fn complete(a: Value, root: &Path) -> Result<Call, String> {
    let a: Complete = parse(a)?;
    let flags = json!({"resolve": a.resolve});
    Ok(call(
        "complete",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn types(a: Value, root: &Path) -> Result<Call, String> {
    let a: Types = parse(a)?;
    let flags = match a.direction.as_deref().unwrap_or("both") {
        "both" => json!({}),
        "supertypes" => json!({"supertypes": true}),
        "subtypes" => json!({"subtypes": true}),
        other => {
            return Err(format!(
                "direction {other:?}: use supertypes, subtypes or both"
            ))
        }
    };
    Ok(call(
        "types",
        Some(selector(&a.pos, root)?),
        flags,
        &a.common,
    ))
}

fn inlay(a: Value, _: &Path) -> Result<Call, String> {
    let a: Inlay = parse(a)?;
    let flags = json!({"file": a.file, "range": a.range});
    Ok(call("inlay", None, flags, &a.common))
}

fn format(a: Value, _: &Path) -> Result<Call, String> {
    let a: Format = parse(a)?;
    let mut flags = write_flags(&a.write);
    flags["file"] = json!(a.file);
    flags["range"] = json!(a.range);
    flags["tab-size"] = json!(a.tab_size);
    flags["tabs"] = json!(a.tabs);
    Ok(call("format", None, flags, &a.common))
}

fn bare(cmd: &'static str) -> impl Fn(Value, &Path) -> Result<Call, String> {
    move |a, _| {
        let a: Nothing = parse(a)?;
        Ok(call(cmd, None, json!({}), &a.common))
    }
}

fn status(a: Value, r: &Path) -> Result<Call, String> {
    bare("status")(a, r)
}

fn capabilities(a: Value, r: &Path) -> Result<Call, String> {
    bare("capabilities")(a, r)
}

fn reload(a: Value, r: &Path) -> Result<Call, String> {
    bare("reload")(a, r)
}

fn raw(a: Value, _: &Path) -> Result<Call, String> {
    let a: Raw = parse(a)?;
    let payload = a.payload.map(|p| p.to_string());
    let flags = json!({"method": a.method, "payload": payload, "target": a.target});
    Ok(call("request", None, flags, &a.common))
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

/// Every tool, in the order `tools/list` gives them: each named after its operation
/// (`request.cmd`, `-` as `_`).
pub fn all() -> Vec<Spec> {
    type Maker = fn() -> Value;
    type Builder = fn(Value, &Path) -> Result<Call, String>;
    let read = |cmd: &str, title: &str, what: &str, schema: Maker, build: Builder| Spec {
        name: super::generic::tool_name(cmd),
        title: title.to_string(),
        description: format!("{what} {ADDRESSING}"),
        read_only: true,
        destructive: false,
        idempotent: true,
        cmd: cmd.to_string(),
        schema: schema(),
        build: Build::Curated(build),
    };
    let plain = |cmd: &str, title: &str, what: &str, schema: Maker, build: Builder| Spec {
        description: what.to_string(),
        ..read(cmd, title, "", schema, build)
    };
    let writes = |cmd: &str, title: &str, what: &str, schema: Maker, build: Builder| Spec {
        read_only: false,
        destructive: true,
        idempotent: false,
        ..read(cmd, title, what, schema, build)
    };
    let mut all = vec![
        read("def", "Go to definition", "Where the symbol at a position is defined (Pyright's answer, as an Analysis Bundle).", schema_of::<At>, def),
        read("type-def", "Go to type definition", "Where the type of the symbol at a position is defined.", schema_of::<At>, type_def),
        read("decl", "Go to declaration", "Where the symbol at a position is declared (textDocument/declaration): for Python the stub the checker reads, where `def` goes to the implementation.", schema_of::<At>, declaration),
        read("refs", "Find references", "Every reference to the symbol at a position, across the workspace (declaration included unless `exclude_declaration`). The text lists the first `limit` lines; `structuredContent` has them all.", schema_of::<Refs>, refs),
        read("hover", "Hover", "The type, signature and documentation of the symbol at a position.", schema_of::<At>, hover),
        plain("symbols", "Symbols", "A file's outline (`file`), or the workspace symbols matching `query`.", schema_of::<Symbols>, symbols),
        plain("diag", "Diagnostics", "The diagnostics of `targets` (paths or globs, workspace-relative), each file from the server for its type, or of every file of the workspace a server serves when none are given. Always current with the files on disk.", schema_of::<Diagnostics>, diagnostics),
        read("impl", "Go to implementation", "Where the symbol at a position is implemented (textDocument/implementation).", schema_of::<At>, implementation),
        read("calls", "Call hierarchy", "The callers (`direction: incoming`), callees (`outgoing`) or both of the function at a position.", schema_of::<Calls>, calls),
        read("highlight", "Highlight", "Every occurrence of the symbol at a position in its file, read or write.", schema_of::<At>, highlight),
        read("signature", "Signature help", "Signature help for the call a position is inside.", schema_of::<At>, signature),
        read("locate", "Locate", "Where a selector lands, without asking the language server: the range, the symbol there, and durable selectors for it that survive later edits.", schema_of::<Locate>, locate),
        writes("rename", "Rename symbol", "Rename the symbol at a position everywhere. By default a preview (a diff and the WorkspaceEdit; nothing is written); with `apply: true` it is written as one transaction (all files or none), refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`.", schema_of::<Rename>, rename),
        writes("rename-file", "Move module", "Move a module file or package directory (`src` -> `dst`) and rewrite every import of it. A preview unless `apply: true` (one transaction; refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`).", schema_of::<RenameFile>, rename_file),
        Spec { description: "Apply a unified diff to the workspace as one transaction, through the rename's safety envelope. By default a preview: the diff, the plan and the diagnostics it would add or remove (nothing written); `apply: true` writes it, refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`. A hunk that no longer matches refuses the whole patch, naming the file and hunk.".into(), ..writes("apply", "Apply a patch", "", schema_of::<ApplyPatch>, apply_patch) },
        writes("edit", "Edit a definition", "Edit the definition (function, class, method, assignment) at a position: `mode` replace_body, replace, insert_before, insert_after (a sibling) or delete (refused while references remain unless `force`); `text` is re-indented to the target. A preview (diff + the diagnostics it would add) unless `apply: true`; `require_clean` refuses an edit that adds an error.", schema_of::<Edit>, edit),
        writes("code-actions", "Code actions", "List the code actions at a position (optionally of one `kind`); with `apply` (an index or title from the list) write that action as one transaction, or preview it with `dry_run`.", schema_of::<CodeActions>, code_actions),
        Spec { destructive: false, read_only: true, ..plain("check", "Check a patch", "The diagnostics a unified diff would add or remove, measured in memory: the files on disk are not touched. The bundle carries the process reward of the step (`reward: pr-v2` for diagnostics by kind, structural facts and, with `tests: true`, the impacted tests run on an overlay copy).", schema_of::<CheckPatch>, check_patch) },
        plain("impact", "Impact of a change", "What a change can affect: the definitions a position or a unified diff touches, their callers and references (transitively, `depth` levels), partitioned into library code and the pytest tests that reach them.", schema_of::<Impact>, impact),
        plain("status", "Status", "The configured servers, their resolved commands and versions (starts nothing).", schema_of::<Nothing>, status),
        plain("capabilities", "Capabilities", "Which LSP features the language server offers (definitions, references, rename, ...), as booleans, with the server's name and version.", schema_of::<Nothing>, capabilities),
        Spec { read_only: false, idempotent: true, ..plain("reload", "Reload configuration", "Re-read lanser.toml and reconfigure the running sessions.", schema_of::<Nothing>, reload) },
        Spec { read_only: false, idempotent: false, ..plain("request", "Raw LSP request", "Send a raw LSP request (`method`, params from `payload`, or a selector/file as `target`) and get the server's answer with workspace paths made relative.", schema_of::<Raw>, raw) },
        read("complete", "Completion", "The completion items at a position, in the server's order (e.g. `{\"selector\": \"main.py@L15:C16\"}` just after `user.` lists `user`'s attributes and methods); `resolve: true` adds each item's detail and documentation.", schema_of::<Complete>, complete),
        read("types", "Type hierarchy", "The direct base classes (`direction: supertypes`), subclasses (`subtypes`) or both of the type at a position, e.g. `{\"selector\": \"py://shapes.geometry#Shape\", \"direction\": \"subtypes\"}`. Needs a server with typeHierarchyProvider (ty, pyrefly, clangd; not Pyright).", schema_of::<Types>, types),
        plain("inlay", "Inlay hints", "The inlay hints of a file (inferred types such as `: int`, parameter names such as `price=`), sorted by position, e.g. `{\"file\": \"src/app.py\", \"range\": \"10,1->20,1\"}`. Needs a server with inlayHintProvider (ty, pyrefly, clangd, rust-analyzer; not Pyright).", schema_of::<Inlay>, inlay),
        Spec { read_only: false, destructive: true, idempotent: false, ..plain("format", "Format file", "Format a file (or `range`, `l,c->l,c`) with the language server's formatter, e.g. `{\"file\": \"src/store.ts\", \"tab_size\": 2}`. By default a preview (a diff; nothing is written); with `apply: true` it is written as one transaction, refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`. Needs a server with a formatter (typescript-language-server, clangd, rust-analyzer, gopls; not Pyright).", schema_of::<Format>, format) },
    ];
    let generic = super::generic::tools(&all);
    all.extend(generic);
    all
}
