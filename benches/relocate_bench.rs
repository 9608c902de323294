//! Resolution cost (issue 3): resolve N `py://` and N `anchor://` selectors over a real project
//! and set the time next to a bare tree-sitter parse of the files they touch. Parsers are
//! cached and each file is parsed once ([`lanser::relocate::ParseCache`], cold at the start).
//!
//! ```text
//! cargo bench --bench relocate_bench -- DIR [N]     # N of each form, default 500
//! ```
//!
//! The selectors are picked deterministically from the project's own definitions (two per
//! file, in path order): the `py://` of each, and an anchor on its header line.

use lanser::relocate::{self, outline, structural, Config, ParseCache};
use lanser::selector::resolve::Document;
use lanser::selector::PositionSpec;
use lanser::workspace::Workspace;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    // `cargo bench` passes `--bench`; everything else is ours.
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: relocate_bench DIR [N]");
        std::process::exit(2);
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(500);
    let cwd = std::env::current_dir().expect("cwd");
    let ws = Workspace::discover(Some(&PathBuf::from(dir)), &cwd).expect("workspace");
    let roots = ws.import_roots();

    // Pick the selectors (not timed).
    let mut symbols = Vec::new();
    let mut anchors = Vec::new();
    for rel in ws.python_files() {
        if symbols.len() >= n {
            break;
        }
        let abs = ws.root.join(&rel);
        let Some(module) = lanser::python::modules::module_of(&roots, &abs) else {
            continue;
        };
        let Ok(doc) = Document::load(abs, rel.clone()) else {
            continue;
        };
        let Ok(p) = structural::parse_doc(doc, module.clone()) else {
            continue;
        };
        let picked = p
            .defs
            .iter()
            .filter(|d| d.kind != outline::DefKind::Variable && d.qual.len() <= 2)
            .take(2);
        for d in picked {
            symbols.push(format!("py://{module}#{}", d.qualname()));
            let header = p.doc.text[d.sig.0..d.sig.1].lines().next().unwrap_or("");
            let spec = PositionSpec::Anchor {
                path: rel.clone(),
                snippet: header.to_string(),
                ctx: None,
                hash: None,
                doc_version: None,
            };
            anchors.push(spec.to_canonical());
        }
    }
    symbols.truncate(n);
    anchors.truncate(n);

    // The files those selectors touch.
    let files: BTreeSet<String> = anchors
        .iter()
        .filter_map(|a| lanser::selector::parse(a).ok())
        .filter_map(|s| s.path().map(str::to_string))
        .collect();

    // Bare tree-sitter: read and parse each file once.
    let t0 = Instant::now();
    let mut nodes = 0usize;
    for rel in &files {
        let text = std::fs::read_to_string(ws.root.join(rel)).expect("read");
        let tree = outline::parse(&text).expect("grammar");
        nodes += tree.root_node().descendant_count();
    }
    let bare = t0.elapsed();

    // Relocation, cold cache.
    let cache = ParseCache::default();
    let docs = lanser::selector::resolve::DocCache::default();
    let cx = relocate::Context {
        ws: &ws,
        io: lanser::text::Encoding::Codepoint,
        cwd: &cwd,
        config: Config::default(),
        store: relocate::snapshot::Store::open(),
        cache: &cache,
        docs: &docs,
    };
    let mut tally = std::collections::BTreeMap::<String, usize>::new();
    let t1 = Instant::now();
    let mut t_py = None;
    for (i, sel) in symbols.iter().chain(&anchors).enumerate() {
        if i == symbols.len() {
            t_py = Some(t1.elapsed());
        }
        let spec = lanser::selector::parse(sel).expect("selector parses");
        let outcome = match relocate::relocate(&cx, &spec) {
            Ok(t) if t.evidence.as_ref().is_some_and(|e| e.ambiguous) => {
                "ok (low confidence)".into()
            }
            Ok(_) => "ok".to_string(),
            Err(r) => r.error.code.symbol().to_string(),
        };
        let form = if sel.starts_with("py://") {
            "py"
        } else {
            "anchor"
        };
        *tally.entry(format!("{form} {outcome}")).or_default() += 1;
    }
    let reloc = t1.elapsed();

    println!(
        "{} symbol + {} anchor selectors over {} files ({} nodes) of {}",
        symbols.len(),
        anchors.len(),
        files.len(),
        nodes,
        ws.root.display()
    );
    for (k, v) in &tally {
        println!("  {k}: {v}");
    }
    println!("bare tree-sitter parse: {:.1} ms", bare.as_secs_f64() * 1e3);
    let t_py = t_py.unwrap_or(reloc);
    println!(
        "relocate (cold cache):  {:.1} ms ({:.1} ms py://, {:.1} ms anchors)",
        reloc.as_secs_f64() * 1e3,
        t_py.as_secs_f64() * 1e3,
        (reloc - t_py).as_secs_f64() * 1e3
    );
    println!("ratio: {:.2}x", reloc.as_secs_f64() / bare.as_secs_f64());
}
