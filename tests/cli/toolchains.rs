//! The install routes through a toolchain's own client (issue 29): `rustup component add` and
//! `go install`, driven here through stand-ins on a PATH of their own (this machine's real
//! rustup and Go cannot be changed or reach their servers from a test), so that each failure
//! is seen as a user meets it: one line saying what to run, nothing half-installed.

use crate::support::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// PATH = `bin` (the stand-ins) then python3's and sh's directories, nothing else.
fn path_with(bin: &Path) -> String {
    let sh = lanser::servers::which("sh").unwrap();
    let py = lanser::servers::which("python3").unwrap();
    [bin, sh.parent().unwrap(), py.parent().unwrap()]
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

fn in_path(path: &str, home: &Path, args: &[&str], ws: &Path) -> Output {
    lanser()
        .env("PATH", path)
        .env("LANSER_HOME", home)
        .args(args)
        .arg("--workspace")
        .arg(ws)
        .output()
        .unwrap()
}

/// rustup's proxy without the component: `rust-analyzer` is a link to `rustup`, which says
/// "Unknown binary" (then a backtrace) when run as it, and cannot download the component.
#[test]
fn rustups_proxy_without_the_component_says_to_run_setup_and_setup_says_why_it_failed() {
    let bin = tempfile::tempdir().unwrap();
    script(
        bin.path(),
        "rustup",
        r#"case "$(basename "$0") $1 $2" in
  "rust-analyzer "*) printf "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.\n\nStack backtrace:\n  15: <unknown>\n" >&2; exit 1;;
  "rustup which rust-analyzer") echo "error: Unknown binary 'rust-analyzer'" >&2; exit 1;;
  "rustup component add") echo "info: downloading component 'rust-analyzer'" >&2; echo "error: could not download file: no network" >&2; exit 1;;
esac
exit 2"#,
    );
    std::os::unix::fs::symlink(bin.path().join("rustup"), bin.path().join("rust-analyzer"))
        .unwrap();
    let path = path_with(bin.path());
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("crate");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"c\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/main.rs"),
        "fn greet() {}\n\nfn main() {\n    greet();\n}\n",
    )
    .unwrap();

    let o = in_path(&path, home.path(), &["def", "src/main.rs@L4:greet"], &ws);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(65), "{err}");
    assert_eq!(
        err.trim_end(),
        "lanser: E/LS_CRASH: cannot run rust-analyzer: rustup's rust-analyzer proxy has no rust-analyzer component for the active toolchain; run `lanser setup --server rust-analyzer` (`rustup component add rust-analyzer rust-src`)"
    );

    let o = in_path(
        &path,
        home.path(),
        &["setup", "--server", "rust-analyzer"],
        &ws,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(65), "{err}");
    assert!(
        err.trim_end().ends_with(
            "lanser: E/LS_CRASH: cannot install rust-analyzer: `rustup component add rust-analyzer rust-src` failed (exit status: 1): error: could not download file: no network"
        ),
        "{err}"
    );

    let o = in_path(&path, home.path(), &["doctor"], &ws);
    let out = stdout(&o);
    let line = out.lines().find(|l| l.contains("rust-analyzer")).unwrap();
    assert!(
        line.contains("rustup's proxy without the component")
            && line.ends_with("run `lanser setup --server rust-analyzer` (it runs `rustup component add rust-analyzer rust-src`)"),
        "{line}"
    );
}

/// `lanser setup --server gopls`: without Go, one line saying what to install and run; with a
/// Go whose module proxy cannot be reached, one line naming the `go install` that failed and
/// what to do instead, and nothing left in the cache.
#[test]
fn gopls_installs_with_go_install_and_a_failure_says_what_to_run() {
    let bin = tempfile::tempdir().unwrap();
    let path = path_with(bin.path());
    let home = tempfile::tempdir().unwrap();
    let ws = fixture("go");
    let o = in_path(&path, home.path(), &["setup", "--server", "gopls"], &ws);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(65), "{err}");
    assert_eq!(
        err.trim_end(),
        "lanser: E/LS_CRASH: cannot install gopls 0.16.1: go is not on PATH; install Go, then run `lanser setup --server gopls` (or `go install golang.org/x/tools/gopls@v0.16.1` yourself and put gopls on PATH)"
    );
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);

    // A go that cannot reach the module proxy, as `go install` fails there.
    script(
        bin.path(),
        "go",
        r#"[ "$1 $2" = "install golang.org/x/tools/gopls@v0.16.1" ] || exit 2
[ -n "$GOBIN" ] || exit 3
echo "go: golang.org/x/tools/gopls@v0.16.1: module lookup disabled or unreachable: dial tcp: connection refused" >&2
exit 1"#,
    );
    let o = in_path(&path, home.path(), &["setup", "--server", "gopls"], &ws);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(65), "{err}");
    let last = err.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("lanser: E/LS_CRASH: cannot install gopls 0.16.1: `go install golang.org/x/tools/gopls@v0.16.1` failed (exit status: 1): go: golang.org/x/tools/gopls@v0.16.1: module lookup disabled or unreachable")
            && last.ends_with("put gopls 0.16.1 or later on PATH another way (Debian: `apt-get install gopls`)"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(home.path().join("gopls"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [".install.lock"], "nothing half-installed");

    // A go that installs: gopls lands in the cache, and def runs it from there.
    script(
        bin.path(),
        "go",
        r#"mkdir -p "$GOBIN" && printf '#!/bin/sh\necho "golang.org/x/tools/gopls v0.16.1"\n' > "$GOBIN/gopls" && chmod +x "$GOBIN/gopls""#,
    );
    let o = in_path(&path, home.path(), &["setup", "--server", "gopls"], &ws);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = home.path().join("gopls/0.16.1");
    assert_eq!(
        stdout(&o),
        format!("gopls 0.16.1 installed at {}\n", dir.display())
    );
    let o = in_path(
        &path,
        home.path(),
        &["status", "--server", "gopls", "--json"],
        &ws,
    );
    let b = bundle(&o);
    let row = b["facts"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "gopls")
        .unwrap();
    assert_eq!(row["resolved"][0], "$LANSER_HOME/gopls/0.16.1/bin/gopls");
    assert_eq!(row["source"], "managed install");
}

/// `lanser setup --server gopls` with no Go but a gopls on PATH (as `lanser doctor` finds it):
/// the pinned version or a newer one is enough, and nothing is installed; an older one is not,
/// and setup goes on to the install (which, without Go, says what to run).
#[test]
fn setup_takes_a_gopls_on_path_at_the_pinned_version_or_newer() {
    let bin = tempfile::tempdir().unwrap();
    let path = path_with(bin.path());
    let home = tempfile::tempdir().unwrap();
    let ws = fixture("go");
    let pinned = lanser::servers::GOPLS_VERSION;
    let (major, rest) = pinned.split_once('.').unwrap();
    let (minor, _) = rest.split_once('.').unwrap();
    let newer = format!("{major}.{}.0", minor.parse::<u32>().unwrap() + 1);
    let older = format!("{major}.{}.9", minor.parse::<u32>().unwrap() - 1);
    for version in [pinned.to_string(), newer] {
        script(
            bin.path(),
            "gopls",
            &format!(r#"[ "$1" = version ] && echo "golang.org/x/tools/gopls v{version}""#),
        );
        let o = in_path(&path, home.path(), &["setup", "--server", "gopls"], &ws);
        assert!(o.status.success(), "{version}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.starts_with(&format!(
                "gopls already on PATH ({}: golang.org/x/tools/gopls v{version})",
                bin.path().join("gopls").display()
            )) && out.contains(&format!("the pinned {pinned} or newer")),
            "{out}"
        );
        assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);
    }
    script(
        bin.path(),
        "gopls",
        &format!(r#"[ "$1" = version ] && echo "golang.org/x/tools/gopls v{older}""#),
    );
    let o = in_path(&path, home.path(), &["setup", "--server", "gopls"], &ws);
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(stderr(&o).contains("go is not on PATH"), "{}", stderr(&o));
}
