//! What an operation hands back for the bundle: its facts (typed, as the operation's own
//! facts type) and the resolution, completeness, edits and measured reward terms the envelope
//! carries beside them. [`Outcome::erase`] is the one place typed facts become JSON.

use crate::bundle::facts::Facts;
use crate::bundle::{Edits, Resolution};
use crate::reward::Measured;
use serde_json::Value;

/// What an operation produced: `F` is its facts type ([`crate::commands::Operation::Facts`]),
/// or `Value` once erased for the bundle.
pub struct Outcome<F> {
    pub facts: F,
    pub resolution: Option<Resolution>,
    pub complete: bool,
    /// The previewed (or applied) change, for mutations.
    pub edits: Option<Edits>,
    /// Diagnostics and safety this step measured for the process reward (read-only steps
    /// leave it out: nothing changed, every check passes).
    pub reward: Option<Measured>,
}

impl<F> Outcome<F> {
    /// A read-only operation's outcome: `facts` with the selector's resolution (if it named
    /// one) and completeness, no edits and no reward terms.
    pub fn read(facts: F, resolution: Option<Resolution>, complete: bool) -> Outcome<F> {
        Outcome {
            facts,
            resolution,
            complete,
            edits: None,
            reward: None,
        }
    }

    /// The same outcome with its facts made into another type (a shared runner's answer
    /// into each operation's facts).
    pub fn map<G>(self, f: impl FnOnce(F) -> G) -> Outcome<G> {
        Outcome {
            facts: f(self.facts),
            resolution: self.resolution,
            complete: self.complete,
            edits: self.edits,
            reward: self.reward,
        }
    }
}

impl<F: Facts> Outcome<F> {
    /// The same outcome with its facts as the bundle's `facts` member: the only place facts
    /// are serialized to JSON (the bundle is assembled from the erased outcome).
    pub fn erase(self) -> Outcome<Value> {
        Outcome {
            facts: serde_json::to_value(&self.facts).expect("facts serialize"),
            resolution: self.resolution,
            complete: self.complete,
            edits: self.edits,
            reward: self.reward,
        }
    }
}
