//! What an operation hands back for the bundle: its facts and the resolution, completeness,
//! edits and measured reward terms the envelope carries beside them.

use crate::bundle::{Edits, Resolution};
use crate::reward::Measured;
use serde_json::Value;

/// What an operation produced.
pub struct Outcome {
    pub facts: Value,
    pub resolution: Option<Resolution>,
    pub complete: bool,
    /// The previewed (or applied) change, for mutations.
    pub edits: Option<Edits>,
    /// Diagnostics and safety this step measured for the process reward (read-only steps
    /// leave it out: nothing changed, every check passes).
    pub reward: Option<Measured>,
}
