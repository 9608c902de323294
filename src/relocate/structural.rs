//! Structural resolution of `py://`, `sym://` and `ast://` selectors
//! (docs/relocation.md#structural-selectors):
//! module → file (or the file a `sym://` or `ast://[file=…]` names, in any language with a
//! grammar: [`super::grammars`]), then the definitions of that file ([`super::outline`],
//! [`super::other_outline`]) filtered by qualified name (or
//! by the kind chain of an ast path), with properties reduced to their getter and `@overload`s
//! picked by index; the role (or the trailing `nodekind[N]`) then names the span.
//!
//! When a module (not a named file) has no such definition, the other modules of its package are searched
//! (a re-export through `__init__.py`, or a symbol moved to a sibling module): such
//! candidates score `module = 0.5`.

use super::grammars::{self, Grammar};
use super::other_outline;
use super::outline::{self, Def, Span};
use super::score::{identifiers, jaccard, proximity, Candidate, Features, SymbolInfo};
use crate::digest::sha256_hex;
use crate::error::{LanserError, Result};
use crate::python::modules;
use crate::selector::resolve::Document;
use crate::selector::{NodePick, Role, SegmentKind};
use crate::workspace::Workspace;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tree_sitter::{Node, Tree};

/// What a structural selector asks for, with the `py://` and `ast://` forms made one.
#[derive(Debug, Clone)]
pub struct Query {
    /// The module, or the file's workspace-relative path when `file` is set.
    pub module: String,
    /// The file a `sym://` or `ast://[file=…]` selector names (any language with an outline).
    pub file: Option<PathBuf>,
    /// Names below the module.
    pub names: Vec<String>,
    /// Required kind of each name (`ast://`), or any (`py://`).
    pub kinds: Option<Vec<SegmentKind>>,
    pub role: Role,
    pub overload: Option<u32>,
    pub node: Option<NodePick>,
}

impl Query {
    pub fn describe(&self) -> String {
        if self.names.is_empty() {
            return format!("module {}", self.module);
        }
        format!("{}#{}", self.module, self.names.join("."))
    }
}

/// A parsed module file.
pub struct Parsed {
    pub doc: Document,
    pub tree: Tree,
    pub defs: Vec<Def>,
    pub module: String,
}

/// Parse `doc` with the grammar of its file type (Python when it has none: a module file).
pub fn parse_doc(doc: Document, module: String) -> Result<Parsed> {
    let grammar = Grammar::for_path(&doc.rel).unwrap_or(Grammar::Python);
    let tree = grammars::parse(grammar, &doc.text).ok_or_else(|| {
        LanserError::internal(format!(
            "the tree-sitter {} grammar could not be loaded (ABI mismatch)",
            grammar.name()
        ))
    })?;
    let defs = match grammar {
        Grammar::Python => outline::definitions(&tree, &doc.text),
        g => other_outline::definitions(g, &tree, &doc.text),
    };
    Ok(Parsed {
        doc,
        tree,
        defs,
        module,
    })
}

/// Parsed files and the import roots of one workspace, reused across selectors: a file is
/// parsed again only when its content (its `docVersion`) changed.
#[derive(Default)]
pub struct ParseCache {
    files: Mutex<HashMap<PathBuf, Arc<Parsed>>>,
}

/// At most this many parses, of this many bytes of source in all, are kept (a daemon lives
/// long); past either the cache starts over. A larger file's parse is not kept.
const PARSE_CACHE_MAX: usize = 512;
const PARSE_CACHE_BYTES: usize = 64 << 20;

fn keep(m: &mut HashMap<PathBuf, Arc<Parsed>>, abs: PathBuf, parsed: Arc<Parsed>) {
    let size = parsed.doc.text.len();
    if size > PARSE_CACHE_BYTES {
        return;
    }
    let held: usize = m
        .iter()
        .filter(|(path, _)| **path != abs)
        .map(|(_, p)| p.doc.text.len())
        .sum();
    if (m.len() >= PARSE_CACHE_MAX && !m.contains_key(&abs)) || held + size > PARSE_CACHE_BYTES {
        m.clear();
    }
    m.insert(abs, parsed);
}

impl ParseCache {
    /// The workspace's import roots (read by the workspace, current with its index).
    pub fn roots(&self, ws: &Workspace) -> Vec<PathBuf> {
        ws.import_roots()
    }

    /// `doc` parsed as `module`: the cached parse when the file's content and module are the
    /// same, else a new parse (kept for the next caller).
    pub fn parsed(&self, doc: &Document, module: String) -> Result<Arc<Parsed>> {
        if let Some(p) = self
            .files
            .lock()
            .ok()
            .and_then(|m| m.get(&doc.abs).cloned())
        {
            if p.doc.doc_version == doc.doc_version && p.module == module && p.doc.rel == doc.rel {
                return Ok(p);
            }
        }
        let parsed = Arc::new(parse_doc(doc.clone(), module)?);
        if let Ok(mut m) = self.files.lock() {
            keep(&mut m, doc.abs.clone(), parsed.clone());
        }
        Ok(parsed)
    }

    /// Parse the files of the modules `names`, last first, on a thread of its own until
    /// `stop` is set: a batch answering from its first line meets it half way and finds the
    /// rest parsed (both cores at work). A prefetched parse is used only for the same bytes and module
    /// ([`Self::load`]), so an edit in between costs a parse, never a stale answer. Nothing
    /// is prefetched for more modules than the cache keeps.
    pub fn prefetch(self: &Arc<Self>, ws: &Workspace, names: Vec<String>, stop: Arc<AtomicBool>) {
        if names.len() > PARSE_CACHE_MAX {
            return;
        }
        let (cache, ws) = (self.clone(), ws.clone());
        std::thread::spawn(move || {
            let roots = ws.import_roots();
            for module in names.into_iter().rev() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Some(file) = modules::module_file(&roots, &module) {
                    let _ = cache.load(&ws, &file, module);
                }
            }
        });
    }

    fn load(&self, ws: &Workspace, abs: &Path, module: String) -> Result<Arc<Parsed>> {
        let abs = abs.canonicalize().unwrap_or_else(|_| abs.to_path_buf());
        let rel = ws.relative(&abs).ok_or_else(|| {
            LanserError::not_found(format!(
                "module {module} is at {}, outside the workspace",
                abs.display()
            ))
        })?;
        let bytes = std::fs::read(&abs)
            .map_err(|e| LanserError::not_found(format!("cannot read {rel}")).with_source(e))?;
        // The same bytes need no hash, line index or parse again.
        if let Some(p) = self.files.lock().ok().and_then(|m| m.get(&abs).cloned()) {
            if p.module == module && p.doc.rel == rel && p.doc.text.as_bytes() == bytes {
                return Ok(p);
            }
        }
        let doc = Document::from_bytes(abs.clone(), rel, bytes)?;
        let parsed = Arc::new(parse_doc(doc, module)?);
        if let Ok(mut m) = self.files.lock() {
            keep(&mut m, abs, parsed.clone());
        }
        Ok(parsed)
    }
}

/// The matching definitions of one parsed file, with properties reduced to their getter and
/// overloads resolved; `Err` with a message when the overload index is out of range.
pub fn matches<'p>(p: &'p Parsed, q: &Query) -> Result<Vec<&'p Def>> {
    let mut found: Vec<&Def> = p
        .defs
        .iter()
        .filter(|d| d.qual == q.names && q.kinds.as_ref().is_none_or(|k| *k == d.chain))
        .collect();
    if found.iter().any(|d| d.is_property()) {
        found.retain(|d| !d.is_accessor());
    }
    let overloads: Vec<&Def> = found.iter().copied().filter(|d| d.is_overload()).collect();
    match q.overload {
        Some(n) => match overloads.get(n as usize) {
            Some(d) => Ok(vec![*d]),
            None if found.is_empty() => Ok(vec![]),
            None => Err(LanserError::not_found(format!(
                "{} has {} @overload definitions; overload={n} is out of range",
                q.describe(),
                overloads.len()
            ))),
        },
        None => {
            if found.len() > overloads.len() && !overloads.is_empty() {
                found.retain(|d| !d.is_overload());
            }
            Ok(found)
        }
    }
}

/// The overload index of `d` among the definitions of its name (for the symbolId).
fn overload_index(p: &Parsed, d: &Def) -> Option<usize> {
    if !d.is_overload() {
        return None;
    }
    p.defs
        .iter()
        .filter(|o| o.qual == d.qual && o.is_overload())
        .position(|o| o.node == d.node)
}

pub fn symbol_info(p: &Parsed, d: &Def) -> SymbolInfo {
    let qualname = d.qualname();
    let ov = overload_index(p, d)
        .map(|i| format!("overload={i}"))
        .unwrap_or_default();
    let kind = d.kind.as_str();
    let material = format!("{}\n{qualname}\n{kind}\n{}\n{ov}", p.module, d.shape);
    SymbolInfo {
        module: p.module.clone(),
        qualname,
        kind: kind.into(),
        shape: d.shape.clone(),
        symbol_id: format!("sym:{}", &sha256_hex(material.as_bytes())[..32]),
    }
}

/// The span a query names inside definition `d` (or the module when `d` is `None`).
pub fn role_span(p: &Parsed, d: Option<&Def>, q: &Query) -> Result<Span> {
    let Some(d) = d else {
        return match &q.node {
            Some(pick) => node_pick(p.tree.root_node(), pick, &q.describe()),
            None => Ok((0, 0)),
        };
    };
    if let Some(pick) = &q.node {
        let node = p
            .tree
            .root_node()
            .descendant_for_byte_range(d.node.0, d.node.1)
            .unwrap_or(p.tree.root_node());
        return node_pick(node, pick, &q.describe());
    }
    let what = q.describe();
    match q.role {
        Role::Def => Ok(d.name),
        Role::Sig => Ok(d.sig),
        Role::Body => d
            .body
            .ok_or_else(|| LanserError::not_found(format!("{what} has no body (no value)"))),
        Role::Doc => d
            .doc
            .ok_or_else(|| LanserError::not_found(format!("{what} has no docstring"))),
    }
}

/// The `index`-th (1-based) named node inside `node`, in document order, whose kind is
/// `pick.kind` or that sits in a field of that name.
fn node_pick(node: Node, pick: &NodePick, what: &str) -> Result<Span> {
    let mut hits = 0u32;
    let mut cursor = node.walk();
    let mut depth = 0usize;
    if cursor.goto_first_child() {
        depth += 1;
        loop {
            let n = cursor.node();
            if n.is_named() && (n.kind() == pick.kind || cursor.field_name() == Some(&pick.kind)) {
                hits += 1;
                if hits == pick.index {
                    return Ok((n.start_byte(), n.end_byte()));
                }
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if depth <= 1 || !cursor.goto_parent() {
                    depth = 0;
                    break;
                }
                depth -= 1;
            }
            if depth == 0 {
                break;
            }
        }
    }
    Err(LanserError::not_found(format!(
        "{what} has {hits} '{}' node(s), not {}",
        pick.kind, pick.index
    )))
}

/// The selector's version of the definition, read from its snapshot: its line and header.
#[derive(Debug, Clone)]
pub struct Original {
    pub line: usize,
    pub header: String,
    /// The role span in the old text, for the exact map.
    pub span: Span,
    pub old_text: String,
}

/// Every candidate for `q` in the workspace, the first document being the module's own file.
pub fn candidates(
    ws: &Workspace,
    cache: &ParseCache,
    q: &Query,
    original: impl Fn(&Parsed) -> Option<Original>,
) -> Result<(Vec<Document>, Vec<Candidate>)> {
    let roots = cache.roots(ws);
    let file = match &q.file {
        Some(f) => f.clone(),
        None => match modules::module_file(&roots, &q.module) {
            Some(f) => f,
            None => return Err(no_module(ws, &roots, &q.module)),
        },
    };
    let own = cache.load(ws, &file, q.module.clone())?;
    let orig = original(&own);
    let selector_ids = format!("{} {}", q.module, q.names.join(" "));
    let score = |p: &Parsed, d: &Def, module: f64| -> Features {
        let line = p
            .doc
            .index
            .position(&p.doc.text, d.name.0, crate::text::Encoding::Utf8)
            .0;
        let cand_ids = format!("{} {}", p.module, d.qual.join(" "));
        let token = match &orig {
            Some(o) => jaccard(
                &identifiers(&o.header),
                &identifiers(&p.doc.text[d.sig.0..d.sig.1]),
            ),
            None => jaccard(&identifiers(&selector_ids), &identifiers(&cand_ids)),
        };
        Features {
            ast: 1.0,
            module,
            token,
            prox: proximity(orig.as_ref().map(|o| o.line), line),
        }
    };
    let mut docs = vec![];
    let mut cands = vec![];
    if q.names.is_empty() {
        let span = role_span(&own, None, q)?;
        let f = score(&own, &dummy_module_def(), 1.0);
        cands.push(Candidate::new(0, span, f));
        docs.push(own.doc.clone());
        return Ok((docs, cands));
    }
    let found = matches(&own, q)?;
    for d in &found {
        let span = role_span(&own, Some(d), q)?;
        let mut c = Candidate::new(0, span, score(&own, d, 1.0));
        c.symbol = Some(symbol_info(&own, d));
        if let Some(o) = &orig {
            c.exact = super::snapshot::map_span(&o.old_text, &own.doc.text, o.span.0, o.span.1)
                == Some(span);
        }
        cands.push(c);
    }
    let dir = file.parent().map(Path::to_path_buf);
    docs.push(own.doc.clone());
    if !cands.is_empty() || q.file.is_some() {
        return Ok((docs, cands));
    }
    // Not in the module itself: the other modules of its package.
    let package = q.module.rsplit_once('.').map(|(p, _)| p.to_string());
    let is_init = file.file_stem().is_some_and(|s| s == "__init__");
    let pkg_name = if is_init {
        Some(q.module.clone())
    } else {
        package
    };
    let (Some(dir), Some(_)) = (dir, pkg_name) else {
        return Ok((docs, cands));
    };
    for path in sibling_modules(&dir, &file) {
        let Some(module) = modules::module_of(&roots, &path.canonicalize().unwrap_or(path.clone()))
        else {
            continue;
        };
        let Ok(p) = cache.load(ws, &path, module) else {
            continue;
        };
        let Ok(found) = matches(&p, q) else { continue };
        if found.is_empty() {
            continue;
        }
        let idx = docs.len();
        for d in found {
            let span = role_span(&p, Some(d), q)?;
            let mut c = Candidate::new(idx, span, score(&p, d, 0.5));
            c.symbol = Some(symbol_info(&p, d));
            cands.push(c);
        }
        docs.push(p.doc.clone());
    }
    Ok((docs, cands))
}

/// "no module M under the import roots [...]", the roots relative to the workspace.
fn no_module(ws: &Workspace, roots: &[PathBuf], module: &str) -> LanserError {
    let shown: Vec<String> = roots
        .iter()
        .map(|r| {
            ws.relative(r)
                .map(|s| if s.is_empty() { ".".into() } else { s })
                .unwrap_or_default()
        })
        .collect();
    LanserError::not_found(format!(
        "no module {module} under the import roots [{}]",
        shown.join(", ")
    ))
}

/// The other Python modules in `dir` beside `file`, sorted (a stub beside its .py is the
/// same module, so only the .py counts).
fn sibling_modules(dir: &Path, file: &Path) -> Vec<PathBuf> {
    let mut siblings: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    siblings.sort();
    let own = file.canonicalize().ok();
    siblings.retain(|path| {
        let is_py = path.extension().is_some_and(|e| e == "py" || e == "pyi");
        let stub_of_py =
            path.extension().is_some_and(|e| e == "pyi") && path.with_extension("py").is_file();
        is_py && !stub_of_py && path.canonicalize().ok() != own
    });
    siblings
}

fn dummy_module_def() -> Def {
    Def {
        qual: vec![],
        chain: vec![],
        kind: outline::DefKind::Variable,
        node: (0, 0),
        name: (0, 0),
        sig: (0, 0),
        body: None,
        doc: None,
        decorators: vec![],
        shape: String::new(),
    }
}

/// Names defined in a file whose last part matches, for a "did you mean" hint.
pub fn similar_names(p: &Parsed, last: &str) -> Vec<String> {
    let mut v: Vec<String> = p
        .defs
        .iter()
        .filter(|d| d.qual.last().is_some_and(|n| n == last))
        .map(Def::qualname)
        .collect();
    v.dedup();
    v
}

/// Read the query's file (for hints) without failing.
pub fn try_load(ws: &Workspace, cache: &ParseCache, q: &Query) -> Option<Arc<Parsed>> {
    let file = match &q.file {
        Some(f) => f.clone(),
        None => modules::module_file(&cache.roots(ws), &q.module)?,
    };
    cache.load(ws, &file, q.module.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(src: &str) -> Parsed {
        let doc = Document::from_text(PathBuf::from("/w/m.py"), "m.py".into(), src.into());
        parse_doc(doc, "m".into()).unwrap()
    }

    fn query(names: &str, role: Role, overload: Option<u32>) -> Query {
        Query {
            module: "m".into(),
            file: None,
            names: names.split('.').map(str::to_string).collect(),
            kinds: None,
            role,
            overload,
            node: None,
        }
    }

    fn text(p: &Parsed, q: &Query) -> Vec<String> {
        matches(p, q)
            .unwrap()
            .into_iter()
            .map(|d| {
                let (s, e) = role_span(p, Some(d), q).unwrap();
                p.doc.text[s..e].to_string()
            })
            .collect()
    }

    #[test]
    fn properties_overloads_and_node_picks() {
        let p = parsed(
            "\
class C:
    @property
    def v(self) -> int:
        return 1

    @v.setter
    def v(self, x: int) -> None: ...

@overload
def f(a: int) -> int: ...
@overload
def f(a: str) -> str: ...
def f(a):
    return g(a) + h(a)
",
        );
        assert_eq!(
            text(&p, &query("C.v", Role::Sig, None)),
            ["def v(self) -> int:"]
        );
        assert_eq!(
            text(&p, &query("f", Role::Sig, Some(1))),
            ["def f(a: str) -> str:"]
        );
        assert_eq!(
            text(&p, &query("f", Role::Body, None)),
            ["return g(a) + h(a)"]
        );
        let e = matches(&p, &query("f", Role::Def, Some(2))).unwrap_err();
        assert!(
            e.message.contains("2 @overload definitions"),
            "{}",
            e.message
        );
        // Overload ids differ; the implementation has none.
        let ids: Vec<String> = p
            .defs
            .iter()
            .filter(|d| d.qualname() == "f")
            .map(|d| symbol_info(&p, d).symbol_id)
            .collect();
        assert_eq!(ids.len(), 3);
        assert!(ids[0] != ids[1] && ids[1] != ids[2]);
        // `nodekind[N]`: by kind, or by field name.
        let mut q = query("f", Role::Def, None);
        q.node = Some(NodePick {
            kind: "call".into(),
            index: 2,
        });
        assert_eq!(text(&p, &q), ["h(a)"]);
        q.node = Some(NodePick {
            kind: "function".into(),
            index: 1,
        });
        assert_eq!(text(&p, &q), ["g"]);
    }

    #[test]
    fn symbol_ids_ignore_position_but_not_shape() {
        let a = parsed("def f(x):\n    pass\n");
        let b = parsed("import os\n\n\ndef f(x):\n    return 2\n");
        let c = parsed("def f(x, y):\n    pass\n");
        let id = |p: &Parsed| symbol_info(p, &p.defs[0]).symbol_id;
        assert_eq!(id(&a), id(&b));
        assert_ne!(id(&a), id(&c));
    }

    #[test]
    fn a_prefetched_parse_serves_the_same_bytes_and_never_an_edited_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("setup.py"), "").unwrap();
        std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
        std::fs::write(root.join("pkg/a.py"), "def f():\n    pass\n").unwrap();
        std::fs::write(root.join("pkg/b.py"), "def g():\n    pass\n").unwrap();
        let ws = Workspace::discover(Some(&root), &root).unwrap();
        let cache = Arc::new(ParseCache::default());
        let names = vec![
            "pkg.a".to_string(),
            "pkg.b".to_string(),
            "pkg.gone".to_string(),
        ];
        cache.prefetch(&ws, names, Arc::new(AtomicBool::new(false)));
        let cached = |rel: &str| cache.files.lock().unwrap().get(&root.join(rel)).cloned();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while (cached("pkg/a.py").is_none() || cached("pkg/b.py").is_none())
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let (a, b) = (cached("pkg/a.py").unwrap(), cached("pkg/b.py").unwrap());
        // Unchanged bytes: the prefetched parse itself.
        let a2 = cache
            .load(&ws, &root.join("pkg/a.py"), "pkg.a".into())
            .unwrap();
        assert!(Arc::ptr_eq(&a, &a2));
        // Edited after the prefetch: parsed again, from the new bytes.
        std::fs::write(root.join("pkg/b.py"), "def h():\n    pass\n").unwrap();
        let b2 = cache
            .load(&ws, &root.join("pkg/b.py"), "pkg.b".into())
            .unwrap();
        assert!(!Arc::ptr_eq(&b, &b2));
        assert_eq!(b2.defs[0].qual, ["h"]);
        // A stopped prefetch parses nothing.
        let idle = Arc::new(ParseCache::default());
        idle.prefetch(&ws, vec!["pkg.a".into()], Arc::new(AtomicBool::new(true)));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(idle.files.lock().unwrap().is_empty());
    }
}
