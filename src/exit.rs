//! How a run ends: its process exit status, named rather than a bare number. Every status but
//! success is an [`ErrorCode`]'s row of the one exit-code table (`error`), except a status a
//! daemon relays as a number over its socket.

use crate::error::ErrorCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitStatus {
    /// Everything asked was answered (a bundle with an error is not success).
    #[default]
    Success,
    /// Ended by this error; for a batch or a replayed trace, its first failing line's.
    Failed(ErrorCode),
    /// A status relayed as a number: a daemon's answer, clap's own usage error.
    Relayed(u8),
}

impl ExitStatus {
    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failed(code) => code.exit_code(),
            ExitStatus::Relayed(n) => n,
        }
    }

    /// The first failure of a sequence (a batch's lines, a trace's operations): `self` if it
    /// already failed, else `next`.
    pub fn or(self, next: ExitStatus) -> ExitStatus {
        if self == ExitStatus::Success {
            next
        } else {
            self
        }
    }
}

impl From<ErrorCode> for ExitStatus {
    fn from(code: ErrorCode) -> Self {
        ExitStatus::Failed(code)
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        std::process::ExitCode::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_of_a_sequence_is_kept() {
        let lines = [
            ExitStatus::Success,
            ExitStatus::Failed(ErrorCode::NotFound),
            ExitStatus::Failed(ErrorCode::LsTimeout),
        ];
        let status = lines.into_iter().fold(ExitStatus::Success, ExitStatus::or);
        assert_eq!(status.code(), 3);
        assert_eq!(ExitStatus::Success.code(), 0);
        assert_eq!(ExitStatus::Relayed(65).code(), 65);
    }
}
