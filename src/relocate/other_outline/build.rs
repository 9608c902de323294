//! Dockerfile and CMake rules (the node kinds and fields of the pinned grammar crates):
//! - Dockerfile (tree-sitter-containerfile): each named stage (`FROM … AS build-env`) is a
//!   `class`, and the `ARG`s and `ENV`s after it, up to the next `FROM`, are its `assign`s
//!   (`build-env.VERSION`); those before the first named stage, or in an unnamed one, are
//!   top-level;
//! - CMake: each `function()` and `macro()` is a `def`, named by its first argument.

use super::{field, named_children, span, Cx, Found, Scope};
use crate::relocate::outline::{Def, DefKind};
use crate::selector::SegmentKind;
use tree_sitter::Node;

impl Cx<'_> {
    /// `FROM image AS stage`: the stage's definition, and the scope of what follows it (the
    /// file's own after an unnamed `FROM`).
    pub(super) fn docker_stage(
        &self,
        n: Node,
        base: &Scope,
        depth: usize,
        out: &mut Vec<Def>,
    ) -> Option<Scope> {
        if n.kind() != "from_instruction" {
            return None;
        }
        let Some(name) = self.name(field(n, "as")) else {
            return Some(base.clone());
        };
        let mut inner = base.clone();
        inner.qual.push(name.0.clone());
        inner.chain.push(SegmentKind::Class);
        self.emit(
            n,
            None,
            Found::new(DefKind::Class, vec![name]),
            base,
            depth,
            out,
        );
        Some(inner)
    }

    /// `ARG A=1 B` / `ENV A=1 B=2`: a variable each.
    pub(super) fn dockerfile<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let pair = match n.kind() {
            "arg_instruction" => "arg_pair",
            "env_instruction" => "env_pair",
            _ => return vec![],
        };
        let pairs: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|c| c.kind() == pair)
            .collect();
        let several = pairs.len() > 1;
        pairs
            .into_iter()
            .map(|p| {
                let value = field(p, "default").or_else(|| field(p, "value"));
                let mut f = Found::new(DefKind::Variable, self.names(field(p, "name"))).body(value);
                if several {
                    f.node = Some(span(p));
                }
                f
            })
            .collect()
    }

    /// `function(name args…) … endfunction()`, `macro(…) … endmacro()`.
    pub(super) fn cmake<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let head = match n.kind() {
            "function_def" => "function_command",
            "macro_def" => "macro_command",
            _ => return vec![],
        };
        let kids = named_children(n);
        let Some(command) = kids.iter().copied().find(|c| c.kind() == head) else {
            return vec![];
        };
        let args = named_children(command)
            .into_iter()
            .find(|c| c.kind() == "argument_list");
        let name = args.and_then(|a| named_children(a).into_iter().next());
        let body = kids.iter().copied().find(|c| c.kind() == "body");
        let mut f = Found::new(DefKind::Function, self.names(name)).body(body);
        f.head = Some(span(command));
        vec![f]
    }
}
