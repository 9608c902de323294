//! The environment a bundle records: the interpreter (probed once, in the background from
//! the orchestrator's start), the configuration's digest over settings, interpreter and
//! lanser.toml layers, the server and the position encoding.

use super::Orchestrator;
use crate::bundle::{Environment, Python};
use crate::env;

impl Orchestrator {
    /// The interpreter's facts, once the probe started with the orchestrator has answered.
    pub(super) async fn python(&mut self) -> Python {
        self.server.python(&self.ground.ws).await
    }

    pub async fn environment(&mut self) -> Environment {
        let python = self.python().await;
        let config_digest = self.config_digest(&python);
        let server = self.server_id();
        Environment {
            server,
            position_encoding: self.encoding(),
            python,
            config_digest,
            platform: env::platform(),
        }
    }

    /// The configuration's digest, computed once for these settings, interpreter and
    /// lanser.toml layers (the server files are read again after [`reconfigure`]).
    ///
    /// [`reconfigure`]: Self::reconfigure
    pub(super) fn config_digest(&mut self, python: &Python) -> String {
        let layers = self.ground.config.file_digests();
        let key = format!("{}|{:?}|{layers:?}", self.server.settings, python.exe);
        match &self.ground.config_digest {
            Some((k, digest)) if *k == key => digest.clone(),
            _ => {
                let digest = env::config_digest_with(
                    &self.ground.ws,
                    &self.server.settings,
                    python,
                    &layers,
                );
                self.ground.config_digest = Some((key, digest.clone()));
                digest
            }
        }
    }

    /// The interpreter's facts, when the probe has answered.
    pub fn probed_python(&self) -> Option<&Python> {
        self.server.python.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orchestrator::Options;
    use std::time::Duration;

    /// A request dropped while it waits for the interpreter probe (MCP cancellation) must not
    /// leave the next bundle with no interpreter: the probe is awaited again, not lost.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_wait_for_the_probe_leaves_it_to_the_next_request() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let want = {
            let ws = crate::workspace::Workspace::new(dir.path().to_path_buf());
            env::probe_python(&ws, env::find_python(&ws).as_deref())
        };
        let mut o = Orchestrator::new(Options::for_workspace(dir.path())).unwrap();
        // Polled once, then dropped: the probe (a python3 start) has not answered yet.
        let _ = tokio::time::timeout(Duration::ZERO, o.python()).await;
        let got = o.python().await;
        assert!(
            want.exe.is_some(),
            "this machine has a python3 for the probe"
        );
        let json = |p: &Python| serde_json::to_value(p).unwrap();
        assert_eq!(json(&got), json(&want));
    }
}
