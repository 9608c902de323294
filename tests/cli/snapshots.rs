//! The human renderings, as `insta` snapshots (`tests/cli/snapshots/`): what a person in a
//! terminal reads for each command, on the bundled demo and on `fixtures/srcpkg` (whose
//! `broken.py` has diagnostics). A change to a rendering shows up as a snapshot diff to review
//! (`INSTA_UPDATE=always cargo test --test cli snapshots`, then read the diff before committing).

use crate::support::*;

/// A command's human output: exit status, stdout and stderr, with the checkout's own path
/// written as `[REPO]` so the snapshot holds on any machine.
fn human(fixture_name: &str, args: &[&str]) -> String {
    let ws = fixture(fixture_name).to_string_lossy().into_owned();
    let o = run(&[args, &["--workspace", &ws]].concat());
    let text = format!(
        "$ lanser {}\nexit {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        o.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    text.replace(&repo().to_string_lossy().into_owned(), "[REPO]")
}

#[test]
fn navigation_renders_locations_one_per_line() {
    insta::assert_snapshot!("def", human("demo", &["def", "cli.py@L17:add_item"]));
    insta::assert_snapshot!("refs", human("demo", &["refs", "cli.py@L17:add_item"]));
    insta::assert_snapshot!("hover", human("demo", &["hover", "cli.py@L17:add_item"]));
    insta::assert_snapshot!("locate", human("demo", &["locate", "cli.py@L17:add_item"]));
    insta::assert_snapshot!("calls", human("demo", &["calls", "cli.py@L14:build_store"]));
}

#[test]
fn outlines_and_diagnostics_render_as_lists() {
    insta::assert_snapshot!("symbols", human("demo", &["symbols", "cli.py"]));
    insta::assert_snapshot!("diag_clean", human("demo", &["diag"]));
    insta::assert_snapshot!("diag_errors", human("srcpkg", &["diag"]));
}

#[test]
fn mutations_render_a_diff_and_say_nothing_was_written() {
    insta::assert_snapshot!(
        "rename_preview",
        human("demo", &["rename", "cli.py@L14:build_store", "make_store"])
    );
    insta::assert_snapshot!(
        "prepare_rename",
        human("demo", &["prepare-rename", "cli.py@L14:build_store"])
    );
}

#[test]
fn errors_render_one_line_on_stderr() {
    insta::assert_snapshot!("not_found", human("demo", &["def", "cli.py@L99:C1"]));
    insta::assert_snapshot!("bad_selector", human("demo", &["def", "cli.py@Lx"]));
    insta::assert_snapshot!("no_such_file", human("demo", &["refs", "nope.py@L1:C1"]));
}
