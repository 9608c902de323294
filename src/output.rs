//! What the command line prints: a bundle's text on stdout and its error on stderr, any text
//! on stdout (a closed pipe is not an error), and under `--verbose` each error's causes. The
//! driver, the daemon's client and `trace` print through it.

use crate::bundle::Bundle;
use crate::error::LanserError;
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
        eprintln!("lanser: {}: {}", err.code, err.message);
        print_causes(&err.causes);
    }
    Ok(bundle.exit_status())
}

/// Print the error that ended a run (with its causes under `--verbose`); its exit status.
pub fn report(err: &LanserError) -> ExitStatus {
    eprintln!("lanser: {err}");
    print_causes(&err.causes());
    ExitStatus::Failed(err.code)
}

/// Print to stdout; a closed pipe is not an error.
pub fn emit(text: &str) -> Result<ExitStatus, LanserError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(ExitStatus::Success),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitStatus::Success),
        Err(e) => Err(LanserError::internal(format!("stdout: {e}")).with_source(e)),
    }
}

/// With `--verbose`, an error's source chain, one `caused by:` line per cause.
fn print_causes(causes: &[String]) {
    if VERBOSE.load(Ordering::Relaxed) {
        for cause in causes {
            eprintln!("  caused by: {cause}");
        }
    }
}
