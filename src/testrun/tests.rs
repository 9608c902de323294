//! The runner on real pytest in tmp projects: outcomes per id, the budget, the patched code
//! winning over a shadowing original, the user's tree byte-identical, the same result twice.

use super::*;
use std::collections::BTreeMap;

fn have_pytest() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("python3 cannot import pytest: skipping");
    }
    ok
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(format!("{rel}/"), vec![]);
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

const LIB: &str = "def double(x):\n    return 2 * x\n";
const TESTS: &str = "import pytest\n\nfrom lib import double\n\n\n\
def test_double():\n    assert double(2) == 4\n\n\n\
def test_fails():\n    assert double(2) == 5\n\n\n\
@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture')\n\n\n\
def test_error(broken):\n    pass\n\n\n\
@pytest.mark.skip(reason='no')\ndef test_skipped():\n    pass\n\n\n\
class TestK:\n    def test_m(self):\n        assert double(0) == 0\n";

fn plan(root: &Path, tests: &[&str], changes: &[(&str, &str)], budget: u64) -> Plan {
    Plan {
        root: root.to_path_buf(),
        files: vec!["lib.py".into(), "tests/test_lib.py".into()],
        data: vec![],
        changes: changes
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect(),
        tests: tests.iter().map(|t| t.to_string()).collect(),
        budget: Duration::from_secs(budget),
        python: PathBuf::from("python3"),
        import_roots: vec![".".into()],
        project_addopts: false,
        whole_files: false,
        side_by_side: false,
        mode: Mode::Run,
    }
}

fn outcome(run: &Run, id: &str) -> Outcome {
    run.tests.iter().find(|t| t.id == id).unwrap().outcome
}

#[test]
fn outcomes_per_id_and_the_users_tree_untouched() {
    if !have_pytest() {
        return;
    }
    let p = project(&[("lib.py", LIB), ("tests/test_lib.py", TESTS)]);
    let before = tree(p.path());
    let ids = [
        "tests/test_lib.py::test_double",
        "tests/test_lib.py::test_fails",
        "tests/test_lib.py::test_error",
        "tests/test_lib.py::test_skipped",
        "tests/test_lib.py::TestK::test_m",
        "tests/test_lib.py::test_absent",
    ];
    let r = run(&plan(p.path(), &ids, &[], 60)).unwrap();
    assert_eq!(outcome(&r, ids[0]), Outcome::Passed, "{r:?}");
    assert_eq!(outcome(&r, ids[1]), Outcome::Failed, "{r:?}");
    assert_eq!(outcome(&r, ids[2]), Outcome::Error, "{r:?}");
    assert_eq!(outcome(&r, ids[3]), Outcome::Skipped, "{r:?}");
    assert_eq!(outcome(&r, ids[4]), Outcome::Passed, "{r:?}");
    assert_eq!(outcome(&r, ids[5]), Outcome::NotRun, "{r:?}");
    assert_eq!(
        (r.passed, r.failed, r.errors, r.skipped, r.not_run),
        (2, 1, 1, 1, 1)
    );
    assert!(!r.timed_out);
    assert_eq!(tree(p.path()), before, "no byte of the user's tree changes");
    // No temporary path in the result, and the same result again.
    let text = serde_json::to_string(&r).unwrap();
    assert!(!text.contains("/tmp"), "{text}");
    assert_eq!(run(&plan(p.path(), &ids, &[], 60)).unwrap(), r);
}

/// A test that needs one before it in its class (as pathspec 0.12.1's symlink tests need the
/// method that sets `no_symlink` on their class) fails when asked alone, and passes with
/// `whole_files`: its class runs in pytest's order, only the asked test is read. Another class
/// and a module-level test of the same file do not run.
#[test]
fn whole_files_keep_a_test_that_needs_an_earlier_one_passing() {
    if !have_pytest() {
        return;
    }
    let ordered = concat!(
        "class TestOrder:\n",
        "    def test_1_sets(self):\n",
        "        type(self).ready = True\n",
        "\n",
        "    def test_2_needs(self):\n",
        "        assert self.ready\n",
        "\n",
        "def _mark(name):\n",
        "    import os\n",
        "    open(os.path.join(os.environ['LANSER_ORIGINAL'], name), 'w').close()\n",
        "\n",
        "def test_module_level():\n",
        "    _mark('module_level_ran')\n",
        "\n",
        "class TestOther:\n",
        "    def test_other(self):\n",
        "        _mark('other_class_ran')\n",
    );
    let p = project(&[("lib.py", LIB), ("tests/test_lib.py", ordered)]);
    let id = ["tests/test_lib.py::TestOrder::test_2_needs"];
    let alone = run(&plan(p.path(), &id, &[], 60)).unwrap();
    assert_eq!(outcome(&alone, id[0]), Outcome::Failed, "{alone:?}");
    let whole = run(&Plan {
        whole_files: true,
        ..plan(p.path(), &id, &[], 60)
    })
    .unwrap();
    assert_eq!(outcome(&whole, id[0]), Outcome::Passed, "{whole:?}");
    assert_eq!(
        whole.tests.len(),
        1,
        "only the asked test is read: {whole:?}"
    );
    for mark in ["module_level_ran", "other_class_ran"] {
        assert!(!p.path().join(mark).exists(), "{mark}: only the class ran");
    }
}

/// A test that reads a data file beside it (as sqlparse 0.5.1's read tests/files/*.sql) fails
/// in an overlay of the sources alone, and passes with the file among the plan's data.
#[test]
fn data_files_the_tests_read_are_in_the_overlay() {
    if !have_pytest() {
        return;
    }
    let reads = concat!(
        "import os\n",
        "\n",
        "def test_reads():\n",
        "    here = os.path.dirname(__file__)\n",
        "    with open(os.path.join(here, 'files', 'q.sql')) as f:\n",
        "        assert f.read() == 'select 1;\\n'\n",
    );
    let p = project(&[
        ("lib.py", LIB),
        ("tests/test_lib.py", reads),
        ("tests/files/q.sql", "select 1;\n"),
    ]);
    let id = ["tests/test_lib.py::test_reads"];
    let without = run(&plan(p.path(), &id, &[], 60)).unwrap();
    assert_eq!(outcome(&without, id[0]), Outcome::Failed, "{without:?}");
    let with = run(&Plan {
        data: vec!["tests/files/q.sql".into()],
        ..plan(p.path(), &id, &[], 60)
    })
    .unwrap();
    assert_eq!(outcome(&with, id[0]), Outcome::Passed, "{with:?}");
}

#[test]
fn the_patched_code_wins_over_a_shadowing_original() {
    if !have_pytest() {
        return;
    }
    let p = project(&[("lib.py", LIB), ("tests/test_lib.py", TESTS)]);
    let before = tree(p.path());
    let id = ["tests/test_lib.py::test_double"];
    // The original tree importable first, as an editable install or PYTHONPATH would make it.
    std::env::set_var("PYTHONPATH", p.path());
    let broken = "def double(x):\n    return 3 * x\n";
    let r = run(&plan(p.path(), &id, &[("lib.py", broken)], 60)).unwrap();
    std::env::remove_var("PYTHONPATH");
    assert_eq!(outcome(&r, id[0]), Outcome::Failed, "{r:?}");
    assert_eq!(tree(p.path()), before);
}

#[test]
fn the_budget_cuts_a_test_that_never_ends_and_keeps_what_finished() {
    if !have_pytest() {
        return;
    }
    let hang = "import time\n\nfrom lib import double\n\n\n\
def test_a_quick():\n    assert double(1) == 2\n\n\n\
def test_b_forever():\n    while True:\n        time.sleep(1)\n";
    let p = project(&[("lib.py", LIB), ("tests/test_lib.py", hang)]);
    let ids = [
        "tests/test_lib.py::test_a_quick",
        "tests/test_lib.py::test_b_forever",
    ];
    // A budget the quick test fits in even on a loaded machine (pytest's own start-up took
    // 6.5 s under a load of 22); the endless one is cut either way. No wall-clock assertion:
    // `timed_out` is the behaviour.
    let r = run(&plan(p.path(), &ids, &[], 20)).unwrap();
    assert!(r.timed_out);
    assert_eq!(outcome(&r, ids[0]), Outcome::Passed, "{r:?}");
    assert_eq!(outcome(&r, ids[1]), Outcome::NotRun, "{r:?}");
}

#[test]
fn a_missing_interpreter_or_pytest_is_named() {
    let p = project(&[("lib.py", LIB)]);
    let mut pl = plan(p.path(), &["x.py::t"], &[], 5);
    pl.python = PathBuf::from("/nonexistent/python");
    let e = run(&pl).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/python"), "{e}");
}

#[test]
fn pytest_collects_and_coverage_measures_each_test() {
    if !have_pytest() {
        return;
    }
    let p = project(&[("lib.py", LIB), ("tests/test_lib.py", TESTS)]);
    let before = tree(p.path());
    let found = collect(&plan(p.path(), &[], &[], 60)).unwrap();
    let ids: Vec<&str> = found.tests.iter().map(|c| c.id.as_str()).collect();
    assert!(ids.contains(&"tests/test_lib.py::TestK::test_m"), "{ids:?}");
    assert!(ids.contains(&"tests/test_lib.py::test_double"), "{ids:?}");
    let m = found
        .tests
        .iter()
        .find(|c| c.name == "TestK.test_m")
        .unwrap();
    assert_eq!((m.path.as_str(), m.line), ("tests/test_lib.py", Some(28)));
    let pl = plan(p.path(), &[], &[], 60);
    if !collect::importable(&pl, "coverage") {
        eprintln!("python3 cannot import coverage: skipping the coverage half");
        return;
    }
    let asked = [
        "tests/test_lib.py::test_double",
        "tests/test_lib.py::test_skipped",
    ];
    let (run, cov) = coverage(&plan(p.path(), &asked, &[], 60)).unwrap();
    let cov = cov.unwrap();
    assert_eq!(outcome(&run, asked[0]), Outcome::Passed);
    // `double`'s body is line 2 of lib.py; the skipped test runs none of it.
    assert_eq!(cov[asked[0]]["lib.py"], vec![2], "{cov:?}");
    assert!(!cov.contains_key(asked[1]), "{cov:?}");
    assert_eq!(tree(p.path()), before);
}

/// A test module that fails to import through lib.py is a broken collector whose traceback
/// names both files; the other module's tests are collected, and a whole-file run of both
/// files still runs the importable one's tests (the failing module's id is an error).
#[test]
fn a_module_that_fails_to_import_is_a_broken_collector_and_does_not_stop_the_others() {
    if !have_pytest() {
        return;
    }
    let lib = "X = missing_name\n\ndef double(x):\n    return 2 * x\n";
    let bad = "from lib import double\n\n\ndef test_double():\n    assert double(2) == 4\n";
    let good = "def test_plain():\n    assert 1 + 1 == 2\n";
    let p = project(&[
        ("lib.py", lib),
        ("tests/test_bad.py", bad),
        ("tests/test_good.py", good),
    ]);
    let files = ["lib.py", "tests/test_bad.py", "tests/test_good.py"];
    let base = Plan {
        files: files.map(String::from).to_vec(),
        ..plan(p.path(), &[], &[], 60)
    };
    let found = collect(&base).unwrap();
    let ids: Vec<&str> = found.tests.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["tests/test_good.py::test_plain"]);
    assert_eq!(
        found.broken,
        [Broken {
            id: "tests/test_bad.py".into(),
            files: vec!["lib.py".into(), "tests/test_bad.py".into()],
        }]
    );
    // With lib.py fixed, nothing is broken.
    let fixed = Plan {
        changes: vec![("lib.py".into(), lib.replace("missing_name", "1"))],
        ..base.clone()
    };
    assert!(collect(&fixed).unwrap().broken.is_empty());
    let asked = ["tests/test_bad.py", "tests/test_good.py::test_plain"];
    let r = run(&Plan {
        tests: asked.map(String::from).to_vec(),
        whole_files: true,
        ..base
    })
    .unwrap();
    assert_eq!(outcome(&r, asked[0]), Outcome::Error, "{r:?}");
    assert_eq!(outcome(&r, asked[1]), Outcome::Passed, "{r:?}");
}

/// An interpreter whose pytest zygote hangs at its start (a plugin that never finishes its
/// import; here a wrapper that sleeps instead of running the zygote): the zygote is killed at
/// the start's bound (the run's deadline or ten seconds), the run is spawned and gives the
/// outcomes, and so is a later run of that interpreter.
#[cfg(unix)]
#[test]
fn a_zygote_that_hangs_at_its_start_is_left_and_the_run_spawned() {
    if !have_pytest() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let p = project(&[("lib.py", LIB), ("tests/test_lib.py", TESTS)]);
    let bin = tempfile::tempdir().unwrap();
    let python = bin.path().join("python");
    let script = "#!/bin/sh\ncase \"$*\" in\n  *\"pytest zygote\"*) exec sleep 600 ;;\nesac\nexec python3 \"$@\"\n";
    std::fs::write(&python, script).unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ids = [
        "tests/test_lib.py::test_double",
        "tests/test_lib.py::test_fails",
    ];
    // The direct fork: refused once the start's bound (here the deadline) passes.
    let (env, log) = (BTreeMap::new(), bin.path().join("log"));
    let request = zygote::Request {
        args: &[],
        cwd: p.path(),
        env: &env,
        path: &[],
        log: &log,
    };
    let tops = std::collections::BTreeSet::new();
    let soon = Instant::now() + Duration::from_secs(2);
    let refused = zygote::fork(&python, &tops, soon, &request).err().unwrap();
    assert_eq!(refused.kind(), io::ErrorKind::TimedOut, "{refused}");
    for budget in [60, 60] {
        let mut plan = plan(p.path(), &ids, &[], budget);
        plan.python = python.clone();
        let r = run(&plan).unwrap();
        assert_eq!(outcome(&r, ids[0]), Outcome::Passed, "{r:?}");
        assert_eq!(outcome(&r, ids[1]), Outcome::Failed, "{r:?}");
        assert!(!r.timed_out);
    }
}

/// Eight tests a file, each recording its process and its niceness in `seen`: test_3 of `b`
/// fails.
fn recording(seen: &Path, file: &str) -> String {
    let mut t = format!(
        "import os\n\nfrom lib import double\n\n\ndef _pid():\n    \
         open(os.path.join({:?}, f'{{os.getpid()}}-{{os.nice(0)}}'), 'w').close()\n\n\n",
        seen.to_string_lossy()
    );
    for i in 0..8 {
        let want = if file == "b" && i == 3 { 0 } else { 2 * i };
        t += &format!("def test_{i}():\n    _pid()\n    assert double({i}) == {want}\n\n\n");
    }
    t
}

fn two_files(root: &Path, ids: Vec<String>) -> Plan {
    Plan {
        files: vec![
            "lib.py".into(),
            "tests/test_a.py".into(),
            "tests/test_b.py".into(),
        ],
        tests: ids,
        side_by_side: true,
        ..plan(root, &[], &[], 120)
    }
}

fn ids_of(files: &[&str]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| (0..8).map(move |i| format!("tests/test_{f}.py::test_{i}")))
        .collect()
}

/// Two files' tests split across two processes give the outcomes one process gives, and the
/// suite is found to allow it.
#[test]
fn shards_run_files_side_by_side_with_the_outcomes_of_one_process() {
    if !have_pytest() {
        return;
    }
    let seen = tempfile::tempdir().unwrap();
    let p = project(&[
        ("lib.py", LIB),
        ("tests/test_a.py", &recording(seen.path(), "a")),
        ("tests/test_b.py", &recording(seen.path(), "b")),
    ]);
    let mut ids = ids_of(&["a", "b"]);
    ids.push("tests/test_a.py::test_absent".into());
    let pl = two_files(p.path(), ids);
    let groups = shards::split(&pl.tests, 2);
    assert_eq!(groups.len(), 2, "{groups:?}");
    let split = shards::run(&pl, &groups).unwrap();
    let mut nice: Vec<i32> = std::fs::read_dir(seen.path())
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.split_once('-').unwrap().1.parse().unwrap()
        })
        .collect();
    nice.sort();
    assert_eq!(nice.len(), 2, "two processes: {nice:?}");
    if cfg!(unix) {
        // The second takes what the first leaves: niceness 10 above lanser's (19 at most).
        assert_eq!(nice[1] - nice[0], 10.min(19 - nice[0]), "{nice:?}");
    }
    let (text, cut) = in_overlay(&pl, |_| Ok(())).unwrap();
    let one = tally(&pl, outcomes(&pl.tests, &text), cut);
    assert_eq!(split, one);
    assert_eq!(outcome(&split, "tests/test_b.py::test_3"), Outcome::Failed);
    assert_eq!(
        outcome(&split, "tests/test_a.py::test_absent"),
        Outcome::NotRun
    );
    assert_eq!((split.passed, split.failed, split.not_run), (15, 1, 1));
    let known: BTreeMap<String, Outcome> = one
        .tests
        .iter()
        .filter(|t| t.outcome != Outcome::NotRun)
        .map(|t| (t.id.clone(), t.outcome))
        .collect();
    if shards::count(&pl) > 1 {
        assert_eq!(agree_side_by_side(&pl, &known).unwrap(), Some(true));
    }
}

/// Two files whose first tests cannot run at the same time (a lock directory, as a fixed port
/// would be): side by side one of them fails, so the suite is found not to allow it, and a run
/// not told it may split gives one process's outcomes. (The test holding the lock waits for
/// the other to try it, 15 s at most: alone, it waits them out.)
#[test]
fn a_suite_whose_tests_collide_side_by_side_runs_in_one_process() {
    if !have_pytest() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let holds = |me: &str, other: &str| {
        let mut t = format!(
            "import os, time\n\nD = {:?}\n\n\n\
             def test_0():\n    \
             try:\n        os.mkdir(os.path.join(D, 'lock'))\n    \
             except FileExistsError:\n        \
             open(os.path.join(D, '{me}-tried'), 'w').close()\n        \
             raise AssertionError('held by the other process')\n    \
             end = time.time() + 15\n    \
             while time.time() < end and not os.path.exists(os.path.join(D, '{other}-tried')):\n        \
             time.sleep(0.05)\n    \
             os.rmdir(os.path.join(D, 'lock'))\n\n\n",
            d.path().to_string_lossy()
        );
        for i in 1..8 {
            t += &format!("def test_{i}():\n    pass\n\n\n");
        }
        t
    };
    let p = project(&[
        ("lib.py", LIB),
        ("tests/test_a.py", &holds("a", "b")),
        ("tests/test_b.py", &holds("b", "a")),
    ]);
    let pl = two_files(p.path(), ids_of(&["a", "b"]));
    let tried = || -> usize {
        let n = std::fs::read_dir(d.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with("-tried")
            })
            .count();
        for e in std::fs::read_dir(d.path()).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        n
    };
    let split = shards::run(&pl, &shards::split(&pl.tests, 2)).unwrap();
    assert_eq!(tried(), 1, "the two first tests met");
    assert_eq!(split.failed, 1, "{split:?}");
    let all_passed: BTreeMap<String, Outcome> = pl
        .tests
        .iter()
        .map(|id| (id.clone(), Outcome::Passed))
        .collect();
    if shards::count(&pl) > 1 {
        assert_eq!(agree_side_by_side(&pl, &all_passed).unwrap(), Some(false));
        tried();
    }
    let one = run(&Plan {
        side_by_side: false,
        ..pl.clone()
    })
    .unwrap();
    assert_eq!(tried(), 0);
    let got: BTreeMap<String, Outcome> = one
        .tests
        .iter()
        .map(|t| (t.id.clone(), t.outcome))
        .collect();
    assert_eq!(got, all_passed);
}
