//! Readiness and roots beyond the built-in signals: a server lanser has never heard of,
//! configured in lanser.toml exactly as the README shows (vim-language-server from npm), right
//! on its first call; the mark when a server gave no sign of being ready; Pyright's on-demand
//! answers before the project load equal to those after it; nested projects answered from the
//! repository root as from their own. Expectations come from the fixture text.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

/// The README's lanser.toml for vim-language-server, verbatim.
fn readme_vim_config() -> String {
    let readme = read(&repo(), "README.md");
    let open = "```toml\n[servers.vim-language-server]";
    let start = readme.find(open).expect("the README shows the table") + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("the block ends");
    readme[start..end].to_string()
}

const PLUGIN: &str = "\
function! s:Greet(name) abort
  return 'hello ' . a:name
endfunction

function! MyPluginRun() abort
  echo s:Greet('world')
endfunction
";

/// The names `function!` headers of `text` define, in order.
fn vim_functions(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("function! "))
        .map(|rest| rest.split('(').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_configured_server_answers_symbols_and_def_right_on_its_first_call() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("lanser.toml"), readme_vim_config()).unwrap();
    std::fs::write(ws.join("plugin.vim"), PLUGIN).unwrap();
    let w = ws.to_str().unwrap();

    // Each in a fresh process: the server's first answer is the one asked for. It answers
    // `[]` until it has parsed the buffer, which it says only by publishing diagnostics.
    let b = json(&["symbols", "plugin.vim", "--workspace", w, "--json"]);
    assert_eq!(b["status"], "ok");
    assert_eq!(b["environment"]["server"]["name"], "vim-language-server");
    let names: Vec<String> = b["facts"]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vim_functions(PLUGIN));
    assert_eq!(b["meta"]["complete"], true);
    assert!(b["meta"].get("readiness").is_none(), "{}", b["meta"]);

    let call = line_with(ws, "plugin.vim", "echo s:Greet(");
    let b = json(&[
        "def",
        &format!("plugin.vim@L{call}:Greet"),
        "--workspace",
        w,
        "--json",
    ]);
    let decl = line_with(ws, "plugin.vim", "function! s:Greet(");
    let found = locs(&b["facts"]["definitions"]);
    assert_eq!(found.len(), 1, "{found:?}");
    let (path, range) = &found[0];
    assert_eq!(path, "plugin.vim");
    // It names the definition from the start of `s:Greet` on the header line.
    let at = ident_range(ws, "plugin.vim", decl, "s:Greet");
    assert_eq!(&range[..2], &at[..2], "{found:?}");
    assert!(b["meta"].get("readiness").is_none(), "{}", b["meta"]);
}

#[test]
fn an_answer_from_a_server_that_gave_no_sign_of_readiness_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    // A server that publishes nothing, begins no progress and answers every request `null`.
    let fake = repo().join("tests/fake_lsp.py");
    let toml = format!(
        "[servers.quiet]\ncommand = \"python3\"\nargs = [{:?}, \"silent\"]\nfile_types = [\"vim\"]\n",
        fake.to_string_lossy()
    );
    std::fs::write(ws.join("lanser.toml"), toml).unwrap();
    std::fs::write(ws.join("plugin.vim"), PLUGIN).unwrap();
    let w = ws.to_str().unwrap();
    let call = line_with(ws, "plugin.vim", "echo s:Greet(");
    let sel = format!("plugin.vim@L{call}:Greet");
    // The wait for a sign is bounded by the timeout (here 5 s, under its own 10 s bound).
    let b = json(&["def", &sel, "--workspace", w, "--timeout", "5", "--json"]);
    assert_eq!(b["status"], "ok");
    assert_eq!(b["facts"]["definitions"], serde_json::json!([]));
    assert_eq!(b["meta"]["readiness"], "unknown");
    assert_eq!(b["meta"]["complete"], false);
    let o = run(&["def", &sel, "--workspace", w, "--timeout", "5"]);
    let text = stdout(&o);
    assert!(text.contains("no definition found"), "{text}");
    assert!(text.contains("(readiness unknown:"), "{text}");
}

/// A server that says its project import failed (jdtls's `language/status` `Error`, as on a
/// Maven project whose build plugins are not in the local repository) answers, but not as a
/// whole answer: `meta.complete` is false and `meta.incomplete` gives its reason.
#[test]
fn an_answer_after_a_failed_project_import_is_marked_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let fake = repo().join("tests/fake_lsp.py");
    let toml = format!(
        "[servers.failing]\ncommand = \"python3\"\nargs = [{:?}, \"importfail\"]\n\
         file_types = [\"vim\"]\nready = \"project-log\"\n",
        fake.to_string_lossy()
    );
    std::fs::write(ws.join("lanser.toml"), toml).unwrap();
    std::fs::write(ws.join("plugin.vim"), PLUGIN).unwrap();
    let w = ws.to_str().unwrap();
    let call = line_with(ws, "plugin.vim", "echo s:Greet(");
    let sel = format!("plugin.vim@L{call}:Greet");
    let b = json(&["def", &sel, "--workspace", w, "--json"]);
    assert_eq!(b["status"], "ok", "{b}");
    assert_eq!(b["facts"]["definitions"], serde_json::json!([]));
    assert_eq!(b["meta"]["complete"], false, "{}", b["meta"]);
    let why = b["meta"]["incomplete"].as_str().unwrap_or_default();
    assert!(why.contains("Failed to import projects"), "{}", b["meta"]);
    assert!(b["meta"].get("readiness").is_none(), "{}", b["meta"]);
    let text = stdout(&run(&["def", &sel, "--workspace", w]));
    assert!(
        text.contains("(incomplete: the server's project import failed: Failed to import"),
        "{text}"
    );
}

/// A push-only server whose lint takes longer than lanser's quiet spell (3 s, as pylsp on a
/// loaded machine): without `publishes-each-version` its silence is read as "nothing
/// changed" (no diagnostics, the documented rule for servers that skip unchanged lists);
/// with it, lanser waits for the publish of the version it sent.
#[test]
fn a_slow_linter_that_publishes_each_version_is_waited_for() {
    let fake = repo().join("tests/fake_lsp.py");
    for (quirks, want) in [("[]", 0), ("[\"publishes-each-version\"]", 1)] {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let toml = format!(
            "[servers.linter]\ncommand = \"python3\"\nargs = [{:?}, \"lintslow\"]\n\
             file_types = [\"vim\"]\nready = \"project-log\"\nquirks = {quirks}\n",
            fake.to_string_lossy()
        );
        std::fs::write(ws.join("lanser.toml"), toml).unwrap();
        std::fs::write(ws.join("plugin.vim"), PLUGIN).unwrap();
        let b = json(&[
            "diag",
            "plugin.vim",
            "--workspace",
            ws.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(b["status"], "ok", "{b}");
        let found = b["facts"]["diagnostics"].as_array().unwrap();
        assert_eq!(found.len(), want, "quirks {quirks}: {b}");
        if want == 1 {
            assert_eq!(found[0]["message"], "slow lint", "{b}");
        }
    }
}

/// A batch's bundles, one per line.
fn batch_bundles(ws: &Path, lines: &[String]) -> Vec<Value> {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let o = batch_lines(ws, &lines);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a bundle line"))
        .collect()
}

#[test]
fn pyrights_on_demand_answers_before_the_load_equal_those_after_it() {
    let ws = fixture("srcpkg");
    let file = "tests/test_geometry.py";
    let line = line_with(&ws, file, "abs(area_of(circle)");
    let sel = format!("{file}@L{line}:area_of");
    // Inside the call's parentheses (1-based column just after `area_of(`).
    let text = read(&ws, file);
    let at = text
        .lines()
        .nth(line as usize - 1)
        .unwrap()
        .find("area_of(")
        .unwrap();
    let call = format!("{file}@L{line}:C{}", at + "area_of(".len() + 1);
    let ops = [("def", &sel), ("hover", &sel), ("signature", &call)];
    let ask: Vec<String> = ops
        .iter()
        .map(|(cmd, s)| format!("{{\"cmd\":\"{cmd}\",\"selector\":\"{s}\"}}"))
        .collect();
    // First on demand (nothing waits for the load), then after `refs` waited for it.
    let mut lines = ask.clone();
    lines.push(format!("{{\"cmd\":\"refs\",\"selector\":\"{sel}\"}}"));
    lines.extend(ask);
    let b = batch_bundles(&ws, &lines);
    assert_eq!(b.len(), 7);
    let decl = line_with(&ws, "src/shapes/geometry.py", "def area_of(");
    assert_eq!(
        locs(&b[0]["facts"]["definitions"]),
        vec![(
            "src/shapes/geometry.py".to_string(),
            ident_range(&ws, "src/shapes/geometry.py", decl, "area_of")
        )]
    );
    for i in 0..3 {
        assert_eq!(b[i]["status"], "ok", "{}", b[i]);
        assert_eq!(
            b[i]["facts"],
            b[i + 4]["facts"],
            "{} before and after the load",
            ops[i].0
        );
        assert_eq!(b[i]["meta"]["complete"], true);
    }
    assert!(b[3]["facts"]["references"].as_array().unwrap().len() > 1);
}

/// Each case: (project directory under the root, file, the line of the use, the name used,
/// the file that defines it, the line of the definition).
const NESTED: &[(&str, &str, &str, &str, &str, &str)] = &[
    (
        "services/alpha",
        "alpha/cli.py",
        "labels = make_alpha(",
        "make_alpha",
        "alpha/core.py",
        "def make_alpha(",
    ),
    (
        "libs/beta",
        "src/beta/report.py",
        "return box_area(",
        "box_area",
        "src/beta/shapes.py",
        "def box_area(",
    ),
    (
        "web",
        "src/main.ts",
        "return formatTotal(",
        "formatTotal",
        "src/format.ts",
        "export function formatTotal(",
    ),
];

/// Batch lines asking `def` and `hover` of each case, its paths under `prefix`.
fn nested_lines(root: &Path, prefix: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (project, file, use_, name, ..) in NESTED.iter().filter(|c| c.0.starts_with(prefix)) {
        let project_dir = root.join(project);
        let line = line_with(&project_dir, file, use_);
        let path = format!("{}{file}", under(project, prefix));
        for cmd in ["def", "hover"] {
            lines.push(format!(
                "{{\"cmd\":\"{cmd}\",\"selector\":\"{path}@L{line}:{name}\"}}"
            ));
        }
    }
    lines
}

/// `project`'s path relative to a session at `prefix` (`""`: the repository root), with `/`.
fn under(project: &str, prefix: &str) -> String {
    if prefix.is_empty() {
        format!("{project}/")
    } else {
        String::new()
    }
}

/// A virtual environment of alpha's own (as `uv venv` or `python3 -m venv` makes one), with
/// `greetlib` installed in it and nowhere else; the path of its module under `alpha`.
fn alpha_venv(alpha: &Path) -> String {
    let venv = alpha.join(".venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python3 runs");
    assert!(made.success());
    let lib = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))
        .expect("lib/pythonX.Y")
        .file_name();
    let module = format!(
        ".venv/lib/{}/site-packages/greetlib/__init__.py",
        lib.to_string_lossy()
    );
    std::fs::create_dir_all(alpha.join(&module).parent().unwrap()).unwrap();
    std::fs::write(
        alpha.join(&module),
        "def greet(name: str) -> str:\n    return \"hi \" + name\n",
    )
    .unwrap();
    module
}

#[test]
fn nested_projects_are_answered_from_the_root_as_from_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    copy_tree(&fixture("nested"), &root);
    let alpha = root.join("services/alpha");
    let greetlib = alpha_venv(&alpha);
    let hello = line_with(&alpha, "alpha/hello.py", "return greet(");
    let ask_greet =
        |path: &str| format!("{{\"cmd\":\"def\",\"selector\":\"{path}@L{hello}:greet\"}}");
    // One session at the repository root answers every project's files.
    let mut lines = nested_lines(&root, "");
    lines.push(ask_greet("services/alpha/alpha/hello.py"));
    let at_root = batch_bundles(&root, &lines);
    assert_eq!(at_root.len(), 2 * NESTED.len() + 1);
    for (i, (project, _, _, name, decl_file, decl)) in NESTED.iter().enumerate() {
        let dir = root.join(project);
        let decl_line = line_with(&dir, decl_file, decl);
        let expected = ident_range(&dir, decl_file, decl_line, name);
        let (def, hover) = (&at_root[2 * i], &at_root[2 * i + 1]);
        assert_eq!(
            locs(&def["facts"]["definitions"]),
            vec![(format!("{project}/{decl_file}"), expected)],
            "{project}: {def}"
        );
        // A session started in the project itself answers the same.
        let mut own_lines = nested_lines(&root, project);
        if *project == "services/alpha" {
            own_lines.push(ask_greet("alpha/hello.py"));
        }
        let own = batch_bundles(&dir, &own_lines);
        assert_eq!(
            locs(&own[0]["facts"]["definitions"]),
            vec![(decl_file.to_string(), expected)],
            "{project}"
        );
        assert_eq!(
            hover["facts"]["hover"], own[1]["facts"]["hover"],
            "{project}"
        );
        assert!(hover["facts"]["hover"].is_object(), "{project}: {hover}");
        if *project == "services/alpha" {
            // A library installed only in alpha's own environment: found from the root too.
            let expected = ident_range(&alpha, &greetlib, 1, "greet");
            assert_eq!(
                locs(&own[2]["facts"]["definitions"]),
                vec![(greetlib.clone(), expected)]
            );
            assert_eq!(
                locs(&at_root[2 * NESTED.len()]["facts"]["definitions"]),
                vec![(format!("{project}/{greetlib}"), expected)]
            );
        }
    }
}
