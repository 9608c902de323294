//! What the command line prints: a bundle's text on stdout and its error on stderr, any text
//! on stdout (a closed pipe is not an error). An error is said once: by default one line with
//! its causes folded in (`lanser: E/CODE: message: cause: cause`); under `--verbose` the line
//! without them and one `  caused by: …` line per cause. The driver, the daemon's client and
//! `trace` print through it.

use crate::bundle::Bundle;
use crate::error::{ErrorCode, LanserError};
use crate::exit::ExitStatus;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--verbose`: error lines are followed by their causes.
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Turn `--verbose` on or off for this process.
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

/// Print a bundle's text, and its error on stderr; the exit status it stands for.
pub fn show(bundle: &Bundle, text: &str) -> Result<ExitStatus, LanserError> {
    emit(text)?;
    if let Some(err) = &bundle.error {
        eprint!(
            "{}",
            error_text(err.code, &err.message, &err.causes, verbose())
        );
    }
    Ok(bundle.exit_status())
}

/// Print the error that ended a run (with its causes under `--verbose`); its exit status.
pub fn report(err: &LanserError) -> ExitStatus {
    print_error(err);
    ExitStatus::Failed(err.code)
}

/// Print to stdout; a closed pipe is not an error.
pub fn emit(text: &str) -> Result<ExitStatus, LanserError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(ExitStatus::Success),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitStatus::Success),
        Err(e) => Err(LanserError::internal("cannot write to stdout").with_source(e)),
    }
}

/// Print an error on stderr (its causes folded in, or listed under it with `--verbose`).
pub fn print_error(err: &LanserError) {
    eprint!(
        "{}",
        error_text(err.code, &err.message, &err.causes(), verbose())
    );
}

fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

/// An error's stderr text: `lanser: E/CODE: message: cause: cause` on one line, or, `verbose`,
/// `lanser: E/CODE: message` and one `  caused by: …` line per cause.
pub fn error_text(code: ErrorCode, message: &str, causes: &[String], verbose: bool) -> String {
    if !verbose {
        return format!("lanser: {}\n", crate::error::folded(code, message, causes));
    }
    let mut text = format!("lanser: {code}: {message}\n");
    for cause in causes {
        text.push_str(&format!("  caused by: {cause}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_says_its_cause_once() {
        let causes = vec!["No such file or directory (os error 2)".to_string()];
        let code = ErrorCode::NotFound;
        assert_eq!(
            error_text(code, "cannot read a.py", &causes, false),
            "lanser: E/NOT_FOUND: cannot read a.py: No such file or directory (os error 2)\n"
        );
        assert_eq!(
            error_text(code, "cannot read a.py", &causes, true),
            "lanser: E/NOT_FOUND: cannot read a.py\n  caused by: No such file or directory (os error 2)\n"
        );
        assert_eq!(
            error_text(code, "gone", &[], true),
            "lanser: E/NOT_FOUND: gone\n"
        );
        assert_eq!(
            error_text(code, "gone", &[], false),
            "lanser: E/NOT_FOUND: gone\n"
        );
    }
}
