//! The operations, one file each named after it (read-only queries and mutations), the
//! modules they share, and their registry.
//!
//! An operation is one type: a clap `Args` struct (so the command line, batch lines, MCP
//! calls and traces all parse it the same way) that implements [`Operation`] — its name, its
//! flags as `request.args`, its facts type (which serializes the bundle's facts and generates
//! their schema), how it runs, and how it shows for a person. The `operations!` list below
//! is the only other place that names it (besides its words for agents, below): it makes [`Op`], the subcommand enum the CLI
//! flattens, and every dispatch over it. Adding an operation is its file, one line here, and
//! its overlay entry in `overlay.rs` (the title and words its MCP tool and SDK method carry).
//!
//! The orchestrator supplies everything shared and never calls an operation; `execute` is
//! where the two meet. An operation runs on a [`crate::orchestrator::Ctx`]: the workspace,
//! options and configuration, the server answering it, selector resolution, and for those that
//! fan out the context of another server — never the engine itself.

// The operations, one file each, named after the operation (`request.cmd`, `-` as `_`).
pub mod apply;
pub mod calls;
pub mod capabilities;
pub mod changes;
pub mod check;
pub mod code_actions;
pub mod complete;
pub mod decl;
pub mod def;
pub mod diag;
pub mod edit;
pub mod format;
pub mod highlight;
pub mod hover;
pub mod impact;
pub mod r#impl;
pub mod inlay;
pub mod locate;
pub mod prepare_rename;
pub mod refs;
pub mod reload;
pub mod rename;
pub mod rename_file;
pub mod request;
pub mod selection_range;
pub mod signature;
pub mod source;
pub mod status;
pub mod symbols;
pub mod tests;
pub mod type_def;
pub mod types;

// What operations share, each named for what it does.
pub mod catalog;
pub mod execute;
pub mod gate;
pub mod mutate;
pub mod overlay;
pub mod positional;
pub mod render;
pub mod route;
mod show;
pub mod symdiff;
pub mod verified;

use crate::bundle::Bundle;
use crate::error::Result;
use crate::orchestrator::Ctx;
pub use crate::outcome::Outcome;
pub use execute::{execute, Execute};
pub use mutate::MutationArgs;
use render::Page;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// One operation: its arguments are `Self`, parsed by clap from a command line or a batch
/// line. Every method but [`Operation::run`] has the answer most operations want.
#[allow(async_fn_in_trait)] // called only on concrete types, so the futures stay `Send`
pub trait Operation:
    clap::Args + serde::Serialize + Clone + std::fmt::Debug + PartialEq + Eq
{
    /// The subcommand name, as in `request.cmd`.
    const NAME: &'static str;
    /// The bundle's `facts`: the type the operation builds them from, and their schema.
    type Facts: crate::bundle::facts::Facts;

    /// The selector it names, if any (it travels as the request's `selector`).
    fn selector(&self) -> Option<&str> {
        None
    }
    /// The other flags, by long name, for `request.args` (in the hash domain): every field
    /// the struct serializes but those [`NOT_ARGS`] names (the selector, which travels beside
    /// the args, and `--dry-run`, which only turns `apply` off) — a new flag is in the hash
    /// domain unless it is added there.
    fn args(&self) -> Map<String, Value> {
        args_of(self)
    }
    /// Whether answering asks the server (the bundle then names it and its capabilities).
    fn uses_server(&self) -> bool {
        true
    }
    /// Whether running it changes what the server sees while it runs (speculative in-memory
    /// edits, or writes): such requests must not overlap with others.
    fn changes_server_view(&self) -> bool {
        false
    }
    /// Whether an answer may be served again for the same request over the same workspace
    /// (the batch and daemon memos): not when it reads a file of its own when it runs.
    fn memoizable(&self) -> bool {
        true
    }
    /// Whether it writes files (`--apply`): every other server session must then be
    /// brought in line with the disk.
    fn writes_files(&self) -> bool {
        false
    }
    /// Whether it reads the calling process's stdin (`--patch -`, `--text -`): it is then
    /// answered in that process, never by the daemon.
    fn reads_stdin(&self) -> bool {
        false
    }
    /// Whether, asked alone, it is answered in the calling process: serverless (`locate`) or
    /// describing that process (`status`, `reload`), so its bundle never depends on whether a
    /// warm session happens to exist. Inside a batch it runs where the batch's other lines do.
    fn answered_locally(&self) -> bool {
        false
    }
    /// Whether it reconfigures the running sessions (`reload`): answers made before it may no
    /// longer hold, and every session must hear it.
    fn reconfigures(&self) -> bool {
        false
    }
    /// Whether it may be dropped midway when its client hangs up: only what leaves no state
    /// behind (not a speculative edit, a write, a reload or a raw request).
    fn cancellable(&self) -> bool {
        !self.changes_server_view() && !self.writes_files() && !self.reconfigures()
    }
    /// Whether its effect on a session outlives it and changes later answers, so that every
    /// session of a batch's pool runs it (`diag`: pulling a file's diagnostics has Pyright
    /// check it, and a type definition into an imported module is found only in a checked
    /// file).
    fn every_session(&self) -> bool {
        false
    }
    /// Whether its answer depends on the set of files (`check`'s importers, `diag` of the
    /// workspace, `rename-file`, `impact`): a memo then sees the index as it is now.
    fn reads_file_set(&self) -> bool {
        false
    }
    /// The files it names besides its selector's path, in order: the request goes to the
    /// server of the first (of the selector's path, when it has one), and one no server serves
    /// is refused ([`Operation::refuses_unserved`]). Read under `opts` (a `check` patch's
    /// first file, from the trace's record or the disk).
    fn files(&self, _opts: &crate::orchestrator::Options) -> Vec<String> {
        Vec::new()
    }
    /// Whether it asks about the whole workspace (a `diag` naming no file): it goes to the one
    /// server that takes every source, when there is one.
    fn whole_workspace(&self) -> bool {
        false
    }
    /// Whether a file of a type no server serves is refused before it runs (`E/UNSUPPORTED`).
    /// Writes that only measure (`apply`, `edit`, `rename-file`) sort a change's files
    /// themselves, and a raw request goes where it is sent.
    fn refuses_unserved(&self) -> bool {
        self.uses_server()
    }
    /// Answer it, with its own facts type (erased to JSON only when the bundle is assembled).
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>>;
    /// Append the human rendering of a successful bundle it produced (`facts` is the
    /// bundle's, read back as its type).
    fn render(_facts: &Self::Facts, _bundle: &Bundle, _page: &mut Page) {
        // Most operations show something; the frame (ambiguity, completeness) comes anyway.
    }
}

/// The schema of one operation's facts.
pub type Maker = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Builds [`Op`] and its dispatch from the list of operations.
macro_rules! operations {
    ($($variant:ident($ty:ty),)*) => {
        /// Every operation, as the subcommands the CLI flattens into its own.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Subcommand)]
        pub enum Op {
            $($variant($ty),)*
        }

        impl Op {
            /// The subcommand name, as in `request.cmd`.
            pub fn name(&self) -> &'static str {
                match self { $(Op::$variant(_) => <$ty as Operation>::NAME,)* }
            }
            /// See [`Operation::selector`].
            pub fn selector(&self) -> Option<&str> {
                match self { $(Op::$variant(a) => a.selector(),)* }
            }
            /// See [`Operation::args`].
            pub fn args(&self) -> Map<String, Value> {
                match self { $(Op::$variant(a) => a.args(),)* }
            }
            /// See [`Operation::uses_server`].
            pub fn uses_server(&self) -> bool {
                match self { $(Op::$variant(a) => a.uses_server(),)* }
            }
            /// See [`Operation::changes_server_view`].
            pub fn changes_server_view(&self) -> bool {
                match self { $(Op::$variant(a) => a.changes_server_view(),)* }
            }
            /// See [`Operation::memoizable`].
            pub fn memoizable(&self) -> bool {
                match self { $(Op::$variant(a) => a.memoizable(),)* }
            }
            /// See [`Operation::writes_files`].
            pub fn writes_files(&self) -> bool {
                match self { $(Op::$variant(a) => a.writes_files(),)* }
            }
            /// See [`Operation::reads_stdin`].
            pub fn reads_stdin(&self) -> bool {
                match self { $(Op::$variant(a) => a.reads_stdin(),)* }
            }
            /// See [`Operation::answered_locally`].
            pub fn answered_locally(&self) -> bool {
                match self { $(Op::$variant(a) => a.answered_locally(),)* }
            }
            /// See [`Operation::reconfigures`].
            pub fn reconfigures(&self) -> bool {
                match self { $(Op::$variant(a) => a.reconfigures(),)* }
            }
            /// See [`Operation::cancellable`].
            pub fn cancellable(&self) -> bool {
                match self { $(Op::$variant(a) => a.cancellable(),)* }
            }
            /// See [`Operation::every_session`].
            pub fn every_session(&self) -> bool {
                match self { $(Op::$variant(a) => a.every_session(),)* }
            }
            /// See [`Operation::reads_file_set`].
            pub fn reads_file_set(&self) -> bool {
                match self { $(Op::$variant(a) => a.reads_file_set(),)* }
            }
            /// See [`Operation::files`].
            pub fn files(&self, opts: &crate::orchestrator::Options) -> Vec<String> {
                match self { $(Op::$variant(a) => a.files(opts),)* }
            }
            /// See [`Operation::whole_workspace`].
            pub fn whole_workspace(&self) -> bool {
                match self { $(Op::$variant(a) => a.whole_workspace(),)* }
            }
            /// See [`Operation::refuses_unserved`].
            pub fn refuses_unserved(&self) -> bool {
                match self { $(Op::$variant(a) => a.refuses_unserved(),)* }
            }
            /// The facts list that pages, if any.
            pub fn paged(&self) -> Option<&'static str> {
                match self {
                    $(Op::$variant(_) => <<$ty as Operation>::Facts as crate::bundle::facts::Facts>::PAGED,)*
                }
            }
            /// Answer it, its facts erased to JSON for the bundle ([`Outcome::erase`]).
            pub async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Value>> {
                match self { $(Op::$variant(a) => a.run(o).await.map(Outcome::erase),)* }
            }
        }

        /// The whole request as a value (`{"cmd", "op"}`, every field of the operation): what
        /// crosses the daemon's socket, read back by [`Op::from_wire`] without a parse.
        impl serde::Serialize for Op {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let mut st = s.serialize_struct("Op", 2)?;
                st.serialize_field("cmd", self.name())?;
                match self { $(Op::$variant(a) => st.serialize_field("op", a)?,)* }
                st.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for Op {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Op, D::Error> {
                use serde::de::Error;
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Wire {
                    cmd: String,
                    op: Value,
                }
                let w = Wire::deserialize(d)?;
                $(if w.cmd == <$ty as Operation>::NAME {
                    return <$ty as serde::Deserialize>::deserialize(w.op)
                        .map(Op::$variant)
                        .map_err(D::Error::custom);
                })*
                Err(D::Error::custom(format!("unknown operation {:?}", w.cmd)))
            }
        }

        /// `(request.cmd, schema of its facts)` for every operation, by name.
        pub fn facts_schemas() -> Vec<(&'static str, Maker)> {
            let mut all: Vec<(&'static str, Maker)> = vec![
                $((<$ty as Operation>::NAME, schema_of::<<$ty as Operation>::Facts>),)*
            ];
            all.sort_by_key(|(name, _)| *name);
            all
        }

        /// The facts list that operation `cmd` pages, if any.
        pub fn facts_paged(cmd: &str) -> Option<&'static str> {
            $(if cmd == <$ty as Operation>::NAME {
                return <<$ty as Operation>::Facts as crate::bundle::facts::Facts>::PAGED;
            })*
            None
        }

        /// Append the human rendering of a successful bundle of operation `cmd`.
        fn render_facts(cmd: &str, bundle: &Bundle, page: &mut Page) {
            $(if cmd == <$ty as Operation>::NAME {
                use serde::Deserialize;
                match <$ty as Operation>::Facts::deserialize(&bundle.facts) {
                    Ok(facts) => <$ty as Operation>::render(&facts, bundle, page),
                    Err(e) => page.line(format_args!("(cannot show {cmd}'s facts: {e}; use --json)")),
                }
                return;
            })*
        }
    };
}

operations! {
    Def(def::Def),
    TypeDef(type_def::TypeDef),
    Refs(refs::Refs),
    Hover(hover::Hover),
    Symbols(symbols::Symbols),
    Diag(diag::Diag),
    Locate(locate::Locate),
    PrepareRename(prepare_rename::PrepareRename),
    Rename(rename::Rename),
    CodeActions(code_actions::CodeActions),
    Check(check::Check),
    Impact(impact::Impact),
    Impl(r#impl::Impl),
    Calls(calls::Calls),
    Highlight(highlight::Highlight),
    Signature(signature::Signature),
    Capabilities(capabilities::Capabilities),
    Status(status::Status),
    Reload(reload::Reload),
    Request(request::RawRequest),
    RenameFile(rename_file::RenameFile),
    Decl(decl::Decl),
    Source(source::Source),
    Complete(complete::Complete),
    Format(format::Format),
    Types(types::Types),
    Inlay(inlay::Inlay),
    Apply(apply::ApplyPatch),
    Edit(edit::Edit),
    Changes(changes::Changes),
    Tests(tests::Tests),
    SelectionRange(selection_range::SelectionRange),
}

/// One request: an operation with its arguments — what the command line, a batch line, the
/// daemon and a trace all turn into before anything runs. Equal requests ask the same (the
/// batch memo's key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Request {
    pub op: Op,
}

/// One operation's words, parsed as the CLI parses them.
#[derive(clap::Parser)]
#[command(name = "lanser", no_binary_name = true)]
struct Words {
    #[command(subcommand)]
    op: Op,
}

impl Request {
    /// The request a command line's words ask for (`["refs", "a.py@L3:x",
    /// "--exclude-declaration"]`), parsed by the CLI's own definitions.
    pub fn parse<I, T>(words: I) -> std::result::Result<Request, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::Parser;
        Words::try_parse_from(words).map(|w| Request { op: w.op })
    }

    /// The selector the operation names, if any.
    pub fn selector(&self) -> Option<&str> {
        self.op.selector()
    }
}

/// Run `req`'s operation.
pub async fn run(o: &mut Ctx<'_>, req: &Request) -> Result<Outcome<Value>> {
    req.op.run(o).await
}

/// The fields an operation serializes that are not `request.args`: the selector travels
/// beside them, and `--dry-run` only turns `apply` off (which `apply` says). An operation's
/// serialization keeps them, so that it is its whole request (the daemon's wire form).
pub const NOT_ARGS: &[&str] = &["selector", "dry-run"];

/// An operation's serialized fields as `request.args`: all but [`NOT_ARGS`].
pub(crate) fn args_of<T: serde::Serialize + ?Sized>(op: &T) -> Map<String, Value> {
    match serde_json::to_value(op) {
        Ok(Value::Object(mut m)) => {
            m.retain(|k, _| !NOT_ARGS.contains(&k.as_str()));
            m
        }
        _ => Map::new(),
    }
}

/// `--exclude-…` flags recorded as what they include (`include-declaration`).
pub(crate) fn negated<S: serde::Serializer>(
    flag: &bool,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_bool(!flag)
}

/// The flag [`negated`] recorded, read back.
pub(crate) fn unnegated<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<bool, D::Error> {
    <bool as serde::Deserialize>::deserialize(d).map(|b| !b)
}

#[cfg(test)]
mod registry_tests {
    use super::*;
    use clap::CommandFactory;
    use std::collections::BTreeSet;

    #[test]
    fn every_operation_is_the_subcommand_of_its_name() {
        let subcommands: BTreeSet<String> = Words::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        let named: BTreeSet<String> = facts_schemas().iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(subcommands, named);
    }

    /// `r` serialized as the daemon's socket carries it and read back.
    fn over_the_wire(r: &Request) -> Request {
        let text = serde_json::to_string(r).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// Every flag of every operation is in the hash domain (it changes `request.args` or the
    /// selector), unless listed here with the reason it asks nothing different.
    #[test]
    fn every_flag_is_in_the_hash_domain() {
        // A preview is what these do without --apply; --dry-run only conflicts with it there,
        // and in code-actions turns a pick's `apply` off (checked in the next test).
        let same = [
            ("rename", "dry_run"),
            ("rename-file", "dry_run"),
            ("code-actions", "dry_run"),
            ("format", "dry_run"),
            ("apply", "dry_run"),
            ("edit", "dry_run"),
        ];
        let cli = Words::command();
        let mut checked = 0;
        for sub in cli.get_subcommands() {
            let name = sub.get_name();
            let mut base = vec![name.to_string()];
            let args: Vec<&clap::Arg> = sub
                .get_arguments()
                .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
                .collect();
            for a in args.iter().filter(|a| a.is_required_set()) {
                if let Some(long) = a.get_long() {
                    base.push(format!("--{long}"));
                }
                base.push(
                    if a.get_id() == "selector" {
                        "a.py@L1:x"
                    } else {
                        "x"
                    }
                    .into(),
                );
            }
            let before = Request::parse(&base).unwrap_or_else(|e| panic!("{base:?}: {e}"));
            assert_eq!(
                over_the_wire(&before),
                before,
                "{base:?} changed on the wire"
            );
            for a in &args {
                if a.is_required_set() {
                    continue;
                }
                let id = a.get_id().as_str();
                let mut words = base.clone();
                if !a.is_positional() {
                    words.push(format!("--{}", a.get_long().unwrap()));
                }
                if !matches!(a.get_action(), clap::ArgAction::SetTrue) {
                    let value = a
                        .get_possible_values()
                        .last()
                        .map(|v| v.get_name().to_string());
                    words.push(value.unwrap_or_else(|| "7".into()));
                }
                let after = Request::parse(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
                assert_eq!(
                    over_the_wire(&after),
                    after,
                    "{words:?} changed on the wire"
                );
                let differs =
                    after.op.args() != before.op.args() || after.selector() != before.selector();
                assert!(
                    differs || same.contains(&(name, id)),
                    "{name} --{id} is not in the hash domain: {:?}",
                    after.op.args()
                );
                checked += 1;
            }
        }
        assert!(checked > 30, "only {checked} flags checked");
    }

    #[test]
    fn words_become_the_request_the_cli_would_make() {
        let r = Request::parse(["refs", "a.py@L3:x", "--exclude-declaration"]).unwrap();
        assert_eq!(r.op.name(), "refs");
        assert_eq!(r.selector(), Some("a.py@L3:x"));
        assert_eq!(r.op.args()["include-declaration"], false);
        let r = Request::parse(["request", "textDocument/hover", "a.py"]).unwrap();
        assert_eq!(
            (r.selector(), &r.op.args()["file"]),
            (None, &Value::from("a.py"))
        );
        // The payload crosses the wire whole, and is in `request.args` only as given or not.
        let r = Request::parse([
            "request",
            "workspace/symbol",
            "--payload",
            r#"{"query":"x"}"#,
        ]);
        let r = r.unwrap();
        assert_eq!(r.op.args()["payload"], true);
        assert!(!r.op.args().contains_key("target"));
        assert!(serde_json::to_string(&r).unwrap().contains(r#"\"query\""#));
        assert_eq!(over_the_wire(&r), r);
        let pick = |extra: &[&str]| {
            let mut w = vec!["code-actions", "a.py@L1:x", "--apply", "0"];
            w.extend(extra);
            Request::parse(w).unwrap().op.args()["apply"].clone()
        };
        assert_eq!(
            (pick(&[]), pick(&["--dry-run"])),
            (true.into(), false.into())
        );
        let r = Request::parse(["rename", "a.py@L1:x", "y", "--apply", "--dry-run"]);
        assert!(r.is_err(), "--apply and --dry-run conflict");
        let r = Request::parse(["rename", "a.py@L1:x", "y", "--apply"]).unwrap();
        assert!(r.op.writes_files() && r.op.changes_server_view() && r.op.memoizable());
        assert!(Request::parse(["fly"]).is_err());
    }
}
