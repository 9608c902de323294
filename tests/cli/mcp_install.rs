//! `lanser mcp install`: the real binary writing each client's configuration in a temporary
//! home (HOME, XDG_CONFIG_HOME, APPDATA, USERPROFILE pointed at it; CODEX_HOME unset) and
//! workspace. What else a file holds keeps its bytes; a second run changes nothing;
//! `--dry-run` writes nothing; a file that does not parse is refused and left as it was.

use crate::support::lanser;
use std::path::{Path, PathBuf};
use std::process::Output;

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        Env {
            _dir: dir,
            home,
            ws,
        }
    }

    /// Where desktop apps keep their settings in this home, as lanser reads it on this OS.
    fn config_dir(&self) -> PathBuf {
        if cfg!(windows) {
            self.home.join("AppData")
        } else if cfg!(target_os = "macos") {
            self.home.join("Library").join("Application Support")
        } else {
            self.home.join(".config")
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = lanser();
        cmd.args(["mcp", "install"])
            .args(args)
            .arg("--workspace")
            .arg(&self.ws)
            .env("HOME", &self.home)
            .env("USERPROFILE", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("APPDATA", self.home.join("AppData"))
            .env_remove("CODEX_HOME");
        cmd.output().unwrap()
    }

    /// Run, expecting success; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The binary and workspace as lanser writes them (absolute, as the OS names them), checked
/// against what the test knows of them, JSON-quoted.
fn written_paths(env: &Env, command: &str, workspace: &str) -> (String, String) {
    let same =
        |a: &str, b: &Path| std::fs::canonicalize(a).unwrap() == std::fs::canonicalize(b).unwrap();
    assert!(
        same(command, Path::new(env!("CARGO_BIN_EXE_lanser"))),
        "{command}"
    );
    assert!(same(workspace, &env.ws), "{workspace}");
    let q = |s: &str| serde_json::to_string(s).unwrap();
    (q(command), q(workspace))
}

/// `command` and `args[2]` of the lanser entry of a JSON file, under `key`.
fn json_paths(env: &Env, path: &Path, key: &str) -> (String, String) {
    let v: serde_json::Value = serde_json::from_str(&read(path)).unwrap();
    let e = &v[key]["lanser"];
    written_paths(
        env,
        e["command"].as_str().unwrap(),
        e["args"][2].as_str().unwrap(),
    )
}

#[test]
fn claude_code_keeps_what_else_the_file_holds_and_a_second_run_changes_nothing() {
    let env = Env::new();
    let path = env.ws.join(".mcp.json");
    let before = "{\n    \"mcpServers\": {\n        \"other\": {\"command\": \"npx\",   \"args\": [\"-y\", \"x\"]}\n    },\n    \"zeta\": [1,2,  3], \"alpha\": true\n}\n";
    write(&path, before);
    let out = env.ok(&["--client", "claude-code"]);
    assert!(
        out.contains("Claude Code (project scope): added lanser to "),
        "{out}"
    );
    let (cmd, ws) = json_paths(&env, &path, "mcpServers");
    let after = format!(
        "{{\n    \"mcpServers\": {{\n        \"other\": {{\"command\": \"npx\",   \"args\": [\"-y\", \"x\"]}},\n        \"lanser\": {{\n            \"type\": \"stdio\",\n            \"command\": {cmd},\n            \"args\": [\"mcp\", \"--workspace\", {ws}]\n        }}\n    }},\n    \"zeta\": [1,2,  3], \"alpha\": true\n}}\n"
    );
    assert_eq!(read(&path), after);
    let again = env.ok(&["--client", "claude-code"]);
    assert!(again.contains("is already up to date"), "{again}");
    assert_eq!(read(&path), after);
    let dry = env.ok(&["--client", "claude-code", "--dry-run"]);
    assert!(dry.contains("is already up to date"), "{dry}");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&env.ws).unwrap().collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn each_client_writes_its_own_file_in_its_own_shape() {
    let env = Env::new();
    let cases: [(&str, &[&str], PathBuf, &str); 6] = [
        (
            "claude-code",
            &["--scope", "user"],
            env.home.join(".claude.json"),
            "mcpServers",
        ),
        (
            "cursor",
            &[],
            env.ws.join(".cursor").join("mcp.json"),
            "mcpServers",
        ),
        (
            "cursor",
            &["--scope", "user"],
            env.home.join(".cursor").join("mcp.json"),
            "mcpServers",
        ),
        (
            "vscode",
            &[],
            env.ws.join(".vscode").join("mcp.json"),
            "servers",
        ),
        (
            "vscode",
            &["--scope", "user"],
            env.config_dir().join("Code").join("User").join("mcp.json"),
            "servers",
        ),
        (
            "claude-desktop",
            &[],
            env.config_dir()
                .join("Claude")
                .join("claude_desktop_config.json"),
            "mcpServers",
        ),
    ];
    for (client, scope, path, key) in cases {
        // An unrelated key and another server, which must keep their bytes.
        let before = format!(
            "{{\n  \"theme\":  \"dark\",\n  \"{key}\": {{\n    \"other\": {{ \"url\": \"http://x/mcp\" }}\n  }}\n}}\n"
        );
        write(&path, &before);
        let mut args = vec!["--client", client];
        args.extend_from_slice(scope);
        let out = env.ok(&args);
        assert!(out.contains("added lanser to"), "{client}: {out}");
        let (cmd, ws) = json_paths(&env, &path, key);
        let typed = match client {
            "claude-code" | "vscode" => "\n      \"type\": \"stdio\",",
            _ => "",
        };
        let after = format!(
            "{{\n  \"theme\":  \"dark\",\n  \"{key}\": {{\n    \"other\": {{ \"url\": \"http://x/mcp\" }},\n    \"lanser\": {{{typed}\n      \"command\": {cmd},\n      \"args\": [\"mcp\", \"--workspace\", {ws}]\n    }}\n  }}\n}}\n"
        );
        assert_eq!(read(&path), after, "{client} {scope:?}");
        assert!(env.ok(&args).contains("already up to date"), "{client}");
        assert_eq!(read(&path), after, "{client} {scope:?}: second run");
    }
}

#[test]
fn codex_config_toml_keeps_its_comments_and_tables() {
    let env = Env::new();
    let path = env.home.join(".codex").join("config.toml");
    let before = "# my settings\nmodel = \"o3\"   # pinned\n\n[mcp_servers.other]\ncommand = \"npx\"\nargs = [ \"-y\",\"x\" ]\n";
    write(&path, before);
    let out = env.ok(&["--client", "codex"]);
    assert!(out.contains("Codex (user scope): added lanser to"), "{out}");
    let doc: toml::Table = toml::from_str(&read(&path)).unwrap();
    let entry = &doc["mcp_servers"]["lanser"];
    let (cmd, ws) = written_paths(
        &env,
        entry["command"].as_str().unwrap(),
        entry["args"][2].as_str().unwrap(),
    );
    let after = format!(
        "{before}\n[mcp_servers.lanser]\ncommand = {cmd}\nargs = [\"mcp\", \"--workspace\", {ws}]\n"
    );
    assert_eq!(read(&path), after);
    assert!(env
        .ok(&["--client", "codex"])
        .contains("already up to date"));
    assert_eq!(read(&path), after);
    // Over HTTP: lanser's keys change, the table stays where it is.
    let out = env.ok(&["--client", "codex", "--http", ":8765"]);
    assert!(out.contains("replaced lanser's entry in"), "{out}");
    assert!(out.contains("--http :8765"), "{out}");
    assert_eq!(
        read(&path),
        format!("{before}\n[mcp_servers.lanser]\nurl = \"http://127.0.0.1:8765/mcp\"\n")
    );
}

#[test]
fn a_different_lanser_entry_is_replaced_keeping_the_users_own_keys() {
    let env = Env::new();
    let path = env.ws.join(".vscode").join("mcp.json");
    // VS Code's file is JSONC: its comments and trailing commas stay.
    let before = "{\n  // team servers\n  \"servers\": {\n    \"lanser\": {\n      \"command\": \"/old/lanser\",\n      \"env\": {\"B\": \"2\", \"A\": \"1\"},\n      \"args\": [\"mcp\"],\n    },\n  },\n  \"inputs\": [],\n}\n";
    write(&path, before);
    let out = env.ok(&["--client", "vscode", "--http", "localhost:9000"]);
    assert!(out.contains("replaced lanser's entry in"), "{out}");
    assert!(
        out.contains("  was: {") && out.contains("\"/old/lanser\""),
        "{out}"
    );
    assert!(
        out.contains("  now: {\"type\": \"http\", \"url\": \"http://localhost:9000/mcp\"}"),
        "{out}"
    );
    assert_eq!(
        read(&path),
        "{\n  // team servers\n  \"servers\": {\n    \"lanser\": {\n      \"env\": {\"B\": \"2\", \"A\": \"1\"},\n      \"type\": \"http\",\n      \"url\": \"http://localhost:9000/mcp\"\n    },\n  },\n  \"inputs\": [],\n}\n"
    );
}

#[test]
fn dry_run_prints_the_change_and_writes_nothing() {
    let env = Env::new();
    let path = env.ws.join(".cursor").join("mcp.json");
    let out = env.ok(&["--client", "cursor", "--dry-run"]);
    assert!(out.contains("would add lanser to"), "{out}");
    assert!(out.contains("(dry run: nothing written)"), "{out}");
    assert!(out.contains("+    \"lanser\": {"), "{out}");
    assert!(!path.exists());
    assert!(
        !path.parent().unwrap().exists(),
        "no directory is made either"
    );
    let before = "{\"mcpServers\": {}}";
    write(&path, before);
    let out = env.ok(&["--client", "cursor", "--dry-run"]);
    assert!(out.contains("-{\"mcpServers\": {}}"), "{out}");
    assert_eq!(read(&path), before);
}

#[test]
fn a_file_that_does_not_parse_is_refused_and_left_as_it_was() {
    let env = Env::new();
    let cases = [
        (
            "claude-code",
            env.ws.join(".mcp.json"),
            "{\"mcpServers\": {,}\n",
        ),
        // A comment is not JSON for Claude Code (VS Code takes it).
        ("claude-code", env.ws.join(".mcp.json"), "{// x\n}\n"),
        (
            "cursor",
            env.ws.join(".cursor").join("mcp.json"),
            "[1, 2]\n",
        ),
        (
            "vscode",
            env.ws.join(".vscode").join("mcp.json"),
            "{\"servers\": 3}\n",
        ),
        (
            "vscode",
            env.ws.join(".vscode").join("mcp.json"),
            "{ /* open\n",
        ),
        (
            "codex",
            env.home.join(".codex").join("config.toml"),
            "[mcp_servers\nx = 1\n",
        ),
        (
            "codex",
            env.home.join(".codex").join("config.toml"),
            "mcp_servers = \"no\"\n",
        ),
    ];
    for (client, path, text) in cases {
        write(&path, text);
        let out = env.run(&["--client", client]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{client} {text:?}: {stderr}");
        assert!(stderr.starts_with("lanser: E/USAGE: "), "{stderr}");
        assert!(stderr.contains("lanser left it as it is"), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(out.stdout.is_empty());
        assert_eq!(read(&path), text, "{client}: untouched");
    }
}

#[test]
fn what_a_client_cannot_take_is_a_usage_error() {
    let env = Env::new();
    for args in [
        &["--client", "claude-desktop", "--http", ":8765"][..],
        &["--client", "claude-desktop", "--scope", "project"],
        &["--client", "cursor", "--http", ":0"],
    ] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("lanser: E/USAGE: "), "{stderr}");
    }
    // `mcp`'s own --http serves; it does not go with `install`.
    let out = lanser()
        .args(["mcp", "--http", ":8765", "install", "--client", "cursor"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let entries = std::fs::read_dir(&env.ws).unwrap().count();
    assert_eq!(entries, 0, "nothing written");
}

#[cfg(unix)]
#[test]
fn a_linked_file_is_written_through_its_link_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let real = env.home.join("dotfiles").join("claude.json");
    write(&real, "{}\n");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = env.home.join(".claude.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    env.ok(&["--client", "claude-code", "--scope", "user"]);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(read(&real).contains("\"lanser\""));
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}
