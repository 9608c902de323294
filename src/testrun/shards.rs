//! A run's tests split across pytest processes by file, run side by side on the machine's
//! cores — for a project whose tests are known to allow it.
//!
//! A shard holds whole files, each file's asked tests in the order asked, so pytest runs a
//! file's tests (a class's methods, with `whole_files`) in its order as one process would;
//! what a shard does not share with the others is a test of another file run before it —
//! which a selected run never promised either (it runs a subset). Processes side by side can
//! collide where one cannot (a fixed port, a file in the working directory), so a run is split
//! only when its plan says the project's tests allow it ([`Plan::side_by_side`]), as
//! [`agree_side_by_side`] measured — the whole suite run split, each outcome equal to the
//! one-process run's — after the coverage run that already runs the suite, kept with the
//! coverage map until a test file or a conftest.py changes (`measure/impact/coverage.rs`). It
//! is a measurement, not a proof: two files split apart by a selection may have shared a
//! process in it. How many processes: [`count`].

use super::{attempt, outcomes, staged, tally, Mode, Outcome, Own, Plan, Run, TestRunError};
use std::collections::BTreeMap;
use std::time::Instant;

/// The niceness of every process but the first (Unix): the others take a core the language
/// server's re-check, which runs meanwhile, leaves idle, and slow it little where it does
/// not (toolz: Pyright's re-check is the longer of the two).
const NICE: u8 = 10;

/// At most this many processes, whatever the cores.
const MAX: usize = 4;

/// A shard is worth its process's start (an interpreter forked or spawned, conftest and the
/// project imported again) from this many asked tests on.
const MIN_PER_SHARD: usize = 8;

/// How many processes a plan may use: `LANSER_TEST_SHARDS`, else the machine's cores (at most
/// [`MAX`]); one for a collection or a coverage run, whose output is one file.
pub(super) fn count(plan: &Plan) -> usize {
    if plan.mode != Mode::Run {
        return 1;
    }
    let set = std::env::var("LANSER_TEST_SHARDS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    match set {
        Some(n) => n.max(1),
        None => std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX),
    }
}

/// `ids` split into at most `n` groups of whole files (fewer when there are fewer files or
/// fewer than [`MIN_PER_SHARD`] asked tests a group), each as even in asked tests as the files
/// allow: the largest file first into the lightest group, ties by name and group number, so
/// the same ids always split the same way. One group is the ids as given.
pub(super) fn split(ids: &[String], n: usize) -> Vec<Vec<String>> {
    let mut files: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for id in ids {
        let file = super::file_of(id);
        files.entry(file).or_default().push(id.clone());
    }
    let n = n.min(files.len()).min(ids.len() / MIN_PER_SHARD);
    if n <= 1 {
        return vec![ids.to_vec()];
    }
    let mut order: Vec<(&str, Vec<String>)> = files.into_iter().collect();
    order.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let mut groups: Vec<Vec<String>> = vec![Vec::new(); n];
    for (_, tests) in order {
        let lightest = (0..n).min_by_key(|&i| (groups[i].len(), i)).expect("n > 1");
        groups[lightest].extend(tests);
    }
    groups
}

/// Run `groups` (from [`split`]) side by side on one overlay.
pub(super) fn run(plan: &Plan, groups: &[Vec<String>]) -> Result<Run, TestRunError> {
    let tmp = tempfile::tempdir().map_err(TestRunError::Overlay)?;
    let (tree, aux) = staged(plan, tmp.path())?;
    let deadline = Instant::now() + plan.budget;
    let runs: Vec<Result<(String, bool), TestRunError>> = std::thread::scope(|s| {
        let (tree, aux) = (&tree, &aux);
        let started: Vec<_> = groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let own = Own::new(aux, &format!("-{i}"), if i == 0 { 0 } else { NICE });
                s.spawn(move || attempt(plan, g, tree, aux, own, deadline))
            })
            .collect();
        started
            .into_iter()
            .map(|h| h.join().expect("a shard's thread panicked"))
            .collect()
    });
    let (mut text, mut timed_out) = (String::new(), false);
    for r in runs {
        let (t, cut) = r?;
        text.push_str(&t);
        text.push('\n');
        timed_out |= cut;
    }
    Ok(tally(plan, outcomes(&plan.tests, &text), timed_out))
}

/// Whether the project's tests give, side by side, the outcomes `one` process gave them (the
/// coverage run of the same state): every test of `one` run split as [`count`] and [`split`]
/// split them, and each outcome compared. `None` when they would not be split (too few files
/// or tests: no selection of them is split either).
pub fn agree_side_by_side(
    plan: &Plan,
    one: &BTreeMap<String, Outcome>,
) -> Result<Option<bool>, TestRunError> {
    let ids: Vec<String> = one.keys().cloned().collect();
    let p = Plan {
        tests: ids,
        mode: Mode::Run,
        side_by_side: true,
        ..plan.clone()
    };
    let groups = split(&p.tests, count(&p));
    if groups.len() < 2 {
        return Ok(None);
    }
    let r = run(&p, &groups)?;
    let same = !r.timed_out && r.tests.iter().all(|t| one.get(&t.id) == Some(&t.outcome));
    Ok(Some(same))
}

#[cfg(test)]
mod tests {
    use super::split;

    fn ids(spec: &[(&str, usize)]) -> Vec<String> {
        spec.iter()
            .flat_map(|(f, n)| (0..*n).map(move |i| format!("{f}::test_{i}")))
            .collect()
    }

    #[test]
    fn whole_files_go_to_the_lightest_group_largest_first() {
        let all = ids(&[("a.py", 10), ("b.py", 30), ("c.py", 12), ("d.py", 9)]);
        let groups = split(&all, 2);
        let files = |g: &Vec<String>| -> Vec<String> {
            let mut f: Vec<String> = g
                .iter()
                .map(|i| crate::testrun::file_of(i).into())
                .collect();
            f.dedup();
            f
        };
        // b (30) → 0; c (12) → 1; a (10) → 1; d (9) → 1.
        assert_eq!(files(&groups[0]), ["b.py"]);
        assert_eq!(files(&groups[1]), ["c.py", "a.py", "d.py"]);
        // Every id once, each file's ids in the order asked.
        let mut back: Vec<String> = groups.concat();
        back.sort();
        let mut want = all.clone();
        want.sort();
        assert_eq!(back, want);
        assert_eq!(groups[0], all[10..40]);
        assert_eq!(split(&all, 2), groups, "the same split again");
    }

    #[test]
    fn one_group_when_files_or_tests_are_too_few() {
        let one_file = ids(&[("a.py", 40)]);
        assert_eq!(split(&one_file, 4), vec![one_file.clone()]);
        let few = ids(&[("a.py", 3), ("b.py", 4), ("c.py", 5)]);
        assert_eq!(split(&few, 4).len(), 1, "12 tests: under two groups' worth");
        let some = ids(&[("a.py", 3), ("b.py", 8), ("c.py", 6)]);
        assert_eq!(split(&some, 4).len(), 2, "17 tests: two groups' worth");
        assert_eq!(split(&some, 1), vec![some.clone()]);
    }
}
