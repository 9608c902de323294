//! The error taxonomy and the one exit-code table (docs/errors.md).
//!
//! Every failure lanser reports is a [`LanserError`]: an [`ErrorCode`] (which fixes the exit
//! status, the `E/…` symbol and whether a retry may help) plus a one-line message naming what
//! was wrong, without its cause; the cause (an I/O error, a serde error, …) is kept once, as the
//! error's `#[source]`, and [`LanserError::causes`] lists the chain. Modules keep their own
//! thiserror enums where they need structure and convert into this type at their boundary,
//! keeping the chain.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// The closed set of error codes, one per row of the exit-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorCode {
    BadSelectorSyntax,
    NotFound,
    Ambiguous,
    IndexingMismatch,
    VersionSkew,
    LsTimeout,
    LsCrash,
    ApplyConflict,
    FsPermissions,
    UnsupportedCap,
    /// A file of a type no configured server serves: nothing answers for it.
    Unsupported,
    RequestCancelled,
    ContentModified,
    IndexingUnsupported,
    ReplayMismatch,
    /// `--require-clean`: the edit would add error diagnostics (it was not written).
    WouldBreak,
    /// A safe delete refused: references to the definition remain (`--force` overrides).
    StillReferenced,
    /// A usage error that is not a selector (bad flag value, bad glob): exit 2.
    Usage,
    /// An I/O or internal failure that fits no other row: exit 1.
    Internal,
}

impl ErrorCode {
    /// The process exit status for this code.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorCode::BadSelectorSyntax | ErrorCode::Usage => 2,
            ErrorCode::NotFound | ErrorCode::IndexingMismatch => 3,
            ErrorCode::Ambiguous => 4,
            ErrorCode::VersionSkew => 10,
            ErrorCode::LsTimeout => 64,
            ErrorCode::LsCrash => 65,
            ErrorCode::ApplyConflict => 70,
            ErrorCode::FsPermissions => 71,
            ErrorCode::UnsupportedCap | ErrorCode::Unsupported => 72,
            ErrorCode::RequestCancelled => 73,
            ErrorCode::ContentModified => 74,
            ErrorCode::IndexingUnsupported => 75,
            ErrorCode::ReplayMismatch => 76,
            ErrorCode::WouldBreak => 77,
            ErrorCode::StillReferenced => 78,
            ErrorCode::Internal => 1,
        }
    }

    /// The `E/…` symbol written into bundles.
    pub fn symbol(self) -> &'static str {
        match self {
            ErrorCode::BadSelectorSyntax => "E/BAD_SELECTOR_SYNTAX",
            ErrorCode::NotFound => "E/NOT_FOUND",
            ErrorCode::Ambiguous => "E/AMBIGUOUS",
            ErrorCode::IndexingMismatch => "E/INDEXING_MISMATCH",
            ErrorCode::VersionSkew => "E/VERSION_SKEW",
            ErrorCode::LsTimeout => "E/LS_TIMEOUT",
            ErrorCode::LsCrash => "E/LS_CRASH",
            ErrorCode::ApplyConflict => "E/APPLY_CONFLICT",
            ErrorCode::FsPermissions => "E/FS_PERMISSIONS",
            ErrorCode::UnsupportedCap => "E/UNSUPPORTED_CAP",
            ErrorCode::Unsupported => "E/UNSUPPORTED",
            ErrorCode::RequestCancelled => "E/REQUEST_CANCELLED",
            ErrorCode::ContentModified => "E/CONTENT_MODIFIED",
            ErrorCode::IndexingUnsupported => "E/INDEXING_UNSUPPORTED",
            ErrorCode::ReplayMismatch => "E/REPLAY_MISMATCH",
            ErrorCode::WouldBreak => "E/WOULD_BREAK",
            ErrorCode::StillReferenced => "E/STILL_REFERENCED",
            ErrorCode::Usage => "E/USAGE",
            ErrorCode::Internal => "E/INTERNAL",
        }
    }

    /// The code whose symbol is `s` (`E/NOT_FOUND` → [`ErrorCode::NotFound`]).
    pub fn from_symbol(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.symbol() == s)
    }

    /// Every code, in the table's order.
    pub const ALL: [ErrorCode; 19] = [
        ErrorCode::BadSelectorSyntax,
        ErrorCode::NotFound,
        ErrorCode::Ambiguous,
        ErrorCode::IndexingMismatch,
        ErrorCode::VersionSkew,
        ErrorCode::LsTimeout,
        ErrorCode::LsCrash,
        ErrorCode::ApplyConflict,
        ErrorCode::FsPermissions,
        ErrorCode::UnsupportedCap,
        ErrorCode::Unsupported,
        ErrorCode::RequestCancelled,
        ErrorCode::ContentModified,
        ErrorCode::IndexingUnsupported,
        ErrorCode::ReplayMismatch,
        ErrorCode::WouldBreak,
        ErrorCode::StillReferenced,
        ErrorCode::Usage,
        ErrorCode::Internal,
    ];

    /// Whether the same request may succeed when tried again (docs/errors.md#exit-codes).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::Ambiguous
                | ErrorCode::VersionSkew
                | ErrorCode::LsTimeout
                | ErrorCode::LsCrash
                | ErrorCode::RequestCancelled
                | ErrorCode::ContentModified
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A failure with its code and a one-line message (no trailing period) naming what was wrong;
/// why (the underlying error) is its source, never folded into the message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct LanserError {
    pub code: ErrorCode,
    pub message: String,
    /// Machine-readable evidence (conflict hunks, candidates), carried into the bundle.
    pub details: Option<serde_json::Value>,
    /// What caused it (an I/O error, a serde error, …): the bundle's `error.causes`, folded
    /// into the error line (or, with `--verbose`, listed under it).
    #[source]
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Two errors are equal when what a bundle shows of them is: code, message and details.
impl PartialEq for LanserError {
    fn eq(&self, other: &Self) -> bool {
        (self.code, &self.message, &self.details) == (other.code, &other.message, &other.details)
    }
}
impl Eq for LanserError {}

impl LanserError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        LanserError {
            code,
            message: message.into(),
            details: None,
            source: None,
        }
    }

    /// Keep `cause` as this error's source.
    pub fn with_source(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(cause));
        self
    }

    /// A module's error converted at its boundary: its text is the message, its sources (not
    /// itself, which would say the message twice) the causes.
    pub fn keeping_chain(
        code: ErrorCode,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let err = LanserError::new(code, e.to_string());
        match e.source() {
            Some(_) => err.with_source(Sources(Box::new(e))),
            None => err,
        }
    }

    /// Its direct source, when that is a `T`.
    pub fn source_as<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.source.as_deref()?.downcast_ref::<T>()
    }

    /// The causes under this error, outermost first, one line each (for `--verbose`).
    pub fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            out.push(cause.to_string().replace('\n', " "));
            next = cause.source();
        }
        out
    }

    /// The error as one line, its causes folded in: `E/CODE: message: cause: cause`.
    pub fn one_line(&self) -> String {
        folded(self.code, &self.message, &self.causes())
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Usage, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    pub fn crash(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::LsCrash, message)
    }
}

/// An error and the chain of its sources on one line, `what: cause: cause` (anyhow's `{:#}`),
/// for an error said as text where no chain can follow it.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        line.push_str(": ");
        line.push_str(&cause.to_string());
        next = cause.source();
    }
    line
}

/// `E/CODE: message: cause: cause` — an error and its causes on one line, each said once.
pub fn folded(code: ErrorCode, message: &str, causes: &[String]) -> String {
    let mut line = format!("{code}: {message}");
    for cause in causes {
        line.push_str(": ");
        line.push_str(cause);
    }
    line
}

/// The chain under an error, without the error: shows as its first source.
#[derive(Debug)]
struct Sources(Box<dyn std::error::Error + Send + Sync>);

impl fmt::Display for Sources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.source() {
            Some(first) => write!(f, "{first}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Sources {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()?.source()
    }
}

pub type Result<T, E = LanserError> = std::result::Result<T, E>;

/// Serde for a code written as its `E/…` symbol (the bundle's `error.code`).
pub mod symbol {
    use super::ErrorCode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(code: &ErrorCode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(code.symbol())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ErrorCode, D::Error> {
        let s = String::deserialize(d)?;
        ErrorCode::from_symbol(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error code {s}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_symbol_names_its_code() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_symbol(code.symbol()), Some(code));
        }
        assert_eq!(ErrorCode::from_symbol("E/NOPE"), None);
    }

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read {0}")]
    struct Unread(&'static str, #[source] std::io::Error);

    #[test]
    fn a_cause_is_kept_once_through_a_modules_error() {
        let os = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = LanserError::not_found("cannot read a.py").with_source(os());
        assert_eq!(e.message, "cannot read a.py");
        assert_eq!(e.causes(), [os().to_string()]);
        assert_eq!(
            e.one_line(),
            format!("E/NOT_FOUND: cannot read a.py: {}", os())
        );
        // At a module's boundary its text is the message and its sources the causes.
        let e = LanserError::keeping_chain(ErrorCode::Usage, Unread("lanser.toml", os()));
        assert_eq!(e.message, "cannot read lanser.toml");
        assert_eq!(e.causes(), [os().to_string()]);
        assert_eq!(
            chain(&Unread("x", os())),
            format!("cannot read x: {}", os())
        );
        let bare = LanserError::keeping_chain(ErrorCode::Usage, os());
        assert!(bare.causes().is_empty());
    }

    #[test]
    fn exit_codes_match_appendix_c() {
        let table = [
            (ErrorCode::BadSelectorSyntax, 2),
            (ErrorCode::NotFound, 3),
            (ErrorCode::Ambiguous, 4),
            (ErrorCode::VersionSkew, 10),
            (ErrorCode::LsTimeout, 64),
            (ErrorCode::LsCrash, 65),
            (ErrorCode::ApplyConflict, 70),
            (ErrorCode::FsPermissions, 71),
            (ErrorCode::UnsupportedCap, 72),
            (ErrorCode::Unsupported, 72),
            (ErrorCode::RequestCancelled, 73),
            (ErrorCode::ContentModified, 74),
            (ErrorCode::IndexingUnsupported, 75),
            (ErrorCode::ReplayMismatch, 76),
            (ErrorCode::WouldBreak, 77),
            (ErrorCode::StillReferenced, 78),
        ];
        for (code, exit) in table {
            assert_eq!(code.exit_code(), exit, "{code}");
        }
    }
}
