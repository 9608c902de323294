//! The fault-injection matrix over real multi-file changes (issue 19): every write-path step
//! of a 4-file rename and of a module move × {SIGKILL, ENOSPC}, a kill at every step of the
//! recovery itself, EACCES on one target, and two applies racing. After each, the next lanser
//! command recovers and the whole tree is either the old one or the new one, byte for byte.
//! Each injection is a cold apply: `LANSER_TEST_FULL=1` injects at every step (the figures
//! in RELIABILITY.md), the default (CI) at every fifth and the last.
//!
//! The hooks (debug builds only, `src/edits/apply.rs`): `LANSER_TEST_KILL_AT=N`,
//! `LANSER_TEST_FAIL_AT=N`, `LANSER_TEST_EACCES=<path suffix>`; and
//! `LANSER_TEST_PAUSE_BEFORE_PLAN=<path>` (`src/commands/mutate.rs`).

use crate::mutations::{commit_tree, git, rename_args, repo_copy, snapshot};
use crate::support::{copy_tree, fixture, lanser, line_with, run, stderr};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Tree = BTreeMap<String, Vec<u8>>;

/// A multi-file change on a git copy of a fixture, with the tree before and after it.
struct Case {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    args: Vec<String>,
    old: Tree,
    new: Tree,
}

impl Case {
    /// `make` builds a fresh workspace; `args(ws)` is the applying command.
    fn new(make: fn() -> (tempfile::TempDir, PathBuf), args: fn(&str) -> Vec<String>) -> Case {
        let (tmp, ws) = make();
        let (_t2, other) = make();
        let o = lanser()
            .args(args(&other.to_string_lossy()))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let args = args(&ws.to_string_lossy());
        Case {
            old: snapshot(&ws),
            new: snapshot(&other),
            _tmp: tmp,
            ws,
            args,
        }
    }

    fn apply(&self, env: (&str, String)) -> std::process::Output {
        lanser()
            .args(&self.args)
            .env(env.0, env.1)
            .output()
            .unwrap()
    }

    /// The next lanser command on the root (it recovers what a killed one left).
    fn next_command(&self, kill_at: Option<usize>) -> std::process::Output {
        let mut c = lanser();
        let w = self.ws.to_string_lossy().into_owned();
        c.args(["locate", "src/shapes/geometry.py@L1:C1", "--workspace", &w]);
        if let Some(j) = kill_at {
            c.env("LANSER_TEST_KILL_AT", j.to_string());
        }
        c.output().unwrap()
    }

    fn journal_left(&self) -> bool {
        let root = self.ws.canonicalize().unwrap();
        lanser::safety::state_dir(&root, "journal").exists()
    }

    /// Old, new, or (a failed test) neither.
    fn state(&self, what: &str) -> &'static str {
        let now = snapshot(&self.ws);
        if now == self.old {
            "old"
        } else if now == self.new {
            "new"
        } else {
            let torn: Vec<&String> = now
                .keys()
                .chain(self.old.keys())
                .chain(self.new.keys())
                .filter(|p| now.get(*p) != self.old.get(*p) && now.get(*p) != self.new.get(*p))
                .collect();
            panic!("{what}: the tree is neither old nor new: torn or stray {torn:?}")
        }
    }

    /// Back to the old tree for the next injection.
    fn reset(&self) {
        git(&self.ws, &["checkout", "-q", "--", "."]);
        git(&self.ws, &["clean", "-qfdx"]);
        assert_eq!(snapshot(&self.ws), self.old);
    }
}

/// What one matrix run saw.
#[derive(Default, Debug)]
struct Tally {
    points: usize,
    old: usize,
    new: usize,
    recovery_kills: usize,
}

/// Whether every step is injected (`LANSER_TEST_FULL=1`: the figures RELIABILITY.md reports),
/// rather than the sample CI runs ([`STRIDE`]).
fn full() -> bool {
    std::env::var("LANSER_TEST_FULL").is_ok_and(|v| v == "1")
}

/// Without `LANSER_TEST_FULL`, every STRIDE-th step is injected, from the first, and the last
/// one: each injection is a cold apply (a language server started), 150 of them for the whole
/// matrix.
const STRIDE: usize = 5;

/// Drive `inject` over the steps of a change: `inject(k)` faults step k and says whether there
/// was such a step (false: the change ran through uninterrupted, k is past the last). Every
/// step, or every [`STRIDE`]-th and then the last one (the one after the commit point), found
/// by going back from the first past the end.
fn steps(mut inject: impl FnMut(usize) -> bool) {
    let stride = if full() { 1 } else { STRIDE };
    let mut k = 1;
    while inject(k) {
        k += stride;
        assert!(k < 400, "no end to the steps");
    }
    for back in (k.saturating_sub(stride - 1).max(2)..k).rev() {
        if inject(back) {
            break;
        }
    }
}

/// SIGKILL at every step N of the change; at each, the recovery is itself killed at every one
/// of its steps first, then let finish. Every outcome wholly old or wholly new.
fn kill_matrix(case: &Case) -> Tally {
    let mut t = Tally::default();
    steps(|k| {
        case.reset();
        let o = case.apply(("LANSER_TEST_KILL_AT", k.to_string()));
        if o.status.code().is_some() {
            assert!(o.status.success(), "{}", stderr(&o));
            assert_eq!(case.state("uninterrupted"), "new");
            assert!(!case.journal_left());
            return false;
        }
        t.points += 1;
        // Kill the recovery at each of its steps: the journal survives to the next one.
        for j in 1..100 {
            let r = case.next_command(Some(j));
            if r.status.code().is_some() {
                break;
            }
            t.recovery_kills += 1;
        }
        let r = case.next_command(None);
        assert!(r.status.success(), "kill point {k}: {}", stderr(&r));
        match case.state(&format!("kill point {k}")) {
            "old" => t.old += 1,
            _ => t.new += 1,
        }
        assert!(!case.journal_left(), "kill point {k}: journal left");
        true
    });
    t
}

/// ENOSPC at every step N: before the commit point the same process rolls back (exit 71, one
/// line, old tree, no journal); after it the apply has happened (exit 0, new tree) and the
/// next command finishes the journal.
fn fail_matrix(case: &Case) -> Tally {
    let mut t = Tally::default();
    steps(|k| {
        case.reset();
        let o = case.apply(("LANSER_TEST_FAIL_AT", k.to_string()));
        if o.status.success() {
            assert_eq!(case.state(&format!("step {k}")), "new");
            if !case.journal_left() {
                return false; // beyond the last step: uninterrupted
            }
            t.points += 1;
            t.new += 1;
            let r = case.next_command(None);
            assert!(r.status.success(), "{}", stderr(&r));
            assert_eq!(case.state(&format!("step {k}, finished")), "new");
            assert!(!case.journal_left(), "step {k}: journal not finished");
            return true;
        }
        t.points += 1;
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(71), "step {k}: {err}");
        assert!(
            err.contains("injected fault") && err.trim_end().lines().count() == 1,
            "step {k}: {err}"
        );
        assert_eq!(case.state(&format!("step {k}")), "old");
        assert!(!case.journal_left(), "step {k}: journal left");
        t.old += 1;
        true
    });
    t
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// The command line of an applied rename of `convert` (src/shapes/units.py) to `name`.
fn convert_renamed(case: &Case, name: &str) -> Vec<String> {
    let w = case.ws.to_string_lossy().into_owned();
    let line = line_with(&case.ws, "src/shapes/units.py", "def convert(");
    let sel = format!("src/shapes/units.py@L{line}:convert");
    let mut a = strings(&rename_args(&w, &sel, name));
    a.extend(["--apply".into(), "--allow-dirty".into()]);
    a
}

fn rename_case() -> Case {
    fn args(w: &str) -> Vec<String> {
        let ws = Path::new(w);
        let line = line_with(ws, "src/shapes/units.py", "def convert(");
        let sel = format!("src/shapes/units.py@L{line}:convert");
        let mut a = strings(&rename_args(w, &sel, "to_unit"));
        a.extend(["--apply".into(), "--allow-dirty".into()]);
        a
    }
    let c = Case::new(|| repo_copy("srcpkg"), args);
    let changed = c.old.keys().filter(|p| c.old[*p] != c.new[*p]).count();
    assert_eq!(changed, 4);
    c
}

fn move_case() -> Case {
    fn make() -> (tempfile::TempDir, PathBuf) {
        let (t, ws) = repo_copy("srcpkg");
        copy_tree(&fixture("srcpkg_imports"), &ws);
        git(&ws, &["add", "-A"]);
        git(&ws, &["commit", "-qm", "overlay"]);
        (t, ws)
    }
    fn args(w: &str) -> Vec<String> {
        [
            "rename-file",
            "src/shapes/units.py",
            "src/shapes/sub/units.py",
            "--workspace",
            w,
            "--apply",
            "--allow-dirty",
        ]
        .map(String::from)
        .to_vec()
    }
    Case::new(make, args)
}

/// The whole matrix (`LANSER_TEST_FULL=1`; its counts go to RELIABILITY.md), or its sample.
#[test]
fn every_injected_fault_leaves_the_tree_wholly_old_or_wholly_new() {
    let mut total = 0;
    for (name, case) in [("rename", rename_case()), ("move", move_case())] {
        let kill = kill_matrix(&case);
        let fail = fail_matrix(&case);
        eprintln!("fault matrix {name}: SIGKILL {kill:?}; ENOSPC {fail:?}");
        let least = if full() { 20 } else { 20 / STRIDE };
        assert!(
            kill.points >= least && fail.points >= least,
            "{kill:?} {fail:?}"
        );
        // Both sides of the commit point are exercised.
        assert!(kill.old > 0 && kill.new > 0, "{kill:?}");
        assert!(fail.old > 0 && fail.new > 0, "{fail:?}");
        assert!(kill.recovery_kills > 0, "{kill:?}");
        total += kill.points + fail.points + kill.recovery_kills;
    }
    eprintln!("fault matrix: {total} injected faults, 0 torn, 0 mixed, 0 lost");
}

/// One target the file system refuses (EACCES): exit 71 naming it, one line, every file old.
/// As root a directory's mode refuses nothing, so the hook plays the refusal there.
#[cfg(unix)]
#[test]
fn a_target_that_cannot_be_written_fails_the_whole_apply() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let case = rename_case();
    // The last of the four files written (plans go in path order): three are written first.
    let target = case
        .old
        .keys()
        .rfind(|p| case.old[*p] != case.new[*p])
        .unwrap()
        .clone();
    let dir = case.ws.join(&target).parent().unwrap().to_path_buf();
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let o = if root {
        case.apply(("LANSER_TEST_EACCES", target.clone()))
    } else {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let o = case.apply(("LANSER_TEST_EACCES", String::new()));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        o
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(71), "{err}");
    assert!(
        err.contains(&target) && err.contains("ermission denied"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(case.state("EACCES"), "old");
    assert!(!case.journal_left());
}

/// Two applies of conflicting renames of the same symbol, started together: the workspace lock
/// serializes them, the second finds its preview stale (70) or its symbol gone (3), and the
/// tree is exactly one of the two renames.
#[test]
fn two_applies_racing_leave_one_of_them_whole() {
    let case = rename_case();
    let args = |name: &str| convert_renamed(&case, name);
    // The tree each rename alone gives.
    let alone = |name: &str| {
        case.reset();
        let o = lanser().args(args(name)).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        snapshot(&case.ws)
    };
    let (a, b) = (alone("to_unit"), alone("to_units"));
    let mut outcomes = BTreeMap::new();
    for round in 0..3 {
        case.reset();
        let pa = lanser().args(args("to_unit")).spawn().unwrap();
        let pb = lanser().args(args("to_units")).spawn().unwrap();
        let (oa, ob) = (
            pa.wait_with_output().unwrap(),
            pb.wait_with_output().unwrap(),
        );
        let codes = (oa.status.code(), ob.status.code());
        let now = snapshot(&case.ws);
        let winner = if now == a {
            "to_unit"
        } else if now == b {
            "to_units"
        } else {
            panic!("round {round}: the tree is neither rename alone ({codes:?})")
        };
        let (win, lose) = if winner == "to_unit" {
            (&oa, &ob)
        } else {
            (&ob, &oa)
        };
        assert!(win.status.success(), "{}", stderr(win));
        // The loser either refused (stale preview, symbol gone) or ran wholly after the winner
        // and found nothing left to rename: never a partial write.
        assert!(
            matches!(lose.status.code(), Some(0 | 3 | 70)),
            "round {round}: {}",
            stderr(lose)
        );
        assert!(!case.journal_left());
        *outcomes.entry(format!("{codes:?}")).or_insert(0) += 1;
    }
    eprintln!("racing applies: {outcomes:?}");
    let w = case.ws.to_string_lossy().into_owned();
    let r = run(&["locate", "src/shapes/geometry.py@L1:C1", "--workspace", &w]);
    assert!(r.status.success(), "{}", stderr(&r));
}

/// The race above at its worst moment, on demand: the second rename's server has read the files
/// and answered, and the first rename is written whole before the second reads the files for
/// its plan (`LANSER_TEST_PAUSE_BEFORE_PLAN`, debug builds). The second's edits were computed
/// against text that is gone, so it must refuse (`E/APPLY_CONFLICT`) and leave the first
/// rename's tree byte for byte. Before the write stamp it applied its `convert` ranges to the
/// first rename's text and exited 0.
#[test]
fn an_apply_landing_after_the_server_read_refuses_the_plan() {
    let case = rename_case();
    let args = |name: &str| convert_renamed(&case, name);
    let marks = tempfile::tempdir().unwrap();
    let go = marks.path().join("go");
    let waiting = marks.path().join("go.waiting");
    let mut late = lanser()
        .args(args("to_units"))
        .env("LANSER_TEST_PAUSE_BEFORE_PLAN", &go)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the late rename's server has answered (or it ended without getting that far).
    while !waiting.exists() {
        if late.try_wait().unwrap().is_some() {
            let o = late.wait_with_output().unwrap();
            panic!("the late rename ended before its plan: {}", stderr(&o));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let first = lanser().args(args("to_unit")).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(snapshot(&case.ws), case.new);
    std::fs::write(&go, b"").unwrap();
    let o = late.wait_with_output().unwrap();
    let now = snapshot(&case.ws);
    let changed: Vec<&String> = now.keys().filter(|p| now[*p] != case.new[*p]).collect();
    assert_eq!(
        o.status.code(),
        Some(70),
        "the late rename did not refuse; files changed after the first rename: {changed:?}; {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("E/APPLY_CONFLICT"), "{}", stderr(&o));
    assert!(changed.is_empty(), "{changed:?}");
    assert!(!case.journal_left());
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// A `size` tmpfs at `dir`, if this process may mount one (root, a mount namespace that
    /// allows it); `None` otherwise.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A real full disk (a 1 MiB tmpfs), not the hook: the rename's last file (padded to 100 KB)
/// finds no room after the first three were written. Exit 71 naming it, one line, and every
/// file as before. Needs the right to mount a tmpfs (root): skipped, saying so, without it.
#[test]
fn a_full_disk_fails_the_whole_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&tmp.path().join("disk"), "1m") else {
        eprintln!("skipped: cannot mount a tmpfs here (not root?)");
        return;
    };
    let ws = fs.0.join("ws");
    copy_tree(&fixture("srcpkg"), &ws);
    let units = ws.join("src/shapes/units.py");
    let mut text = std::fs::read_to_string(&units).unwrap();
    text.push_str(&"# padding for the full-disk test\n".repeat(3000));
    std::fs::write(&units, text).unwrap();
    commit_tree(&ws);
    // Fill the disk but for 24 KiB: room for the small files' temp copies, not units.py's.
    let free = |p: &Path| {
        let o = std::process::Command::new("df")
            .args(["-k", "--output=avail"])
            .arg(p)
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&o.stdout).into_owned();
        s.lines().last().unwrap().trim().parse::<usize>().unwrap()
    };
    let fill = vec![0u8; (free(&fs.0) - 24) * 1024];
    std::fs::write(fs.0.join("fill"), fill).unwrap();
    let before = snapshot(&ws);
    let w = ws.to_string_lossy().into_owned();
    let line = line_with(&ws, "src/shapes/units.py", "def convert(");
    let sel = format!("src/shapes/units.py@L{line}:convert");
    let o = lanser()
        .args(rename_args(&w, &sel, "to_unit"))
        .arg("--apply")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(71), "{err}");
    assert!(
        err.contains("src/shapes/units.py") && err.contains("No space left on device"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(snapshot(&ws), before);
    // With room again, the same apply goes through.
    std::fs::remove_file(fs.0.join("fill")).unwrap();
    let o = lanser()
        .args(rename_args(&w, &sel, "to_unit"))
        .arg("--apply")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let changed = before
        .keys()
        .filter(|p| std::fs::read(ws.join(p)).unwrap() != before[*p])
        .count();
    assert_eq!(changed, 4);
}
