//! The environment a bundle records: the interpreter (probed once, in the background from
//! the server's making), the configuration's digest over settings, interpreter and
//! lanser.toml layers, the server and the position encoding.

use super::{Ground, Server};
use crate::bundle::{Environment, Python, ServerId};
use crate::env;
use crate::lsp::session::Session;

impl Server {
    /// The environment of a bundle this server answered (or would answer) over `ground`.
    pub async fn environment(&mut self, ground: &Ground) -> Environment {
        let python = self.python(&ground.ws).await;
        let config_digest = self.config_digest(ground, &python);
        Environment {
            server: self.server_id(),
            position_encoding: self.encoding(),
            python,
            config_digest,
            platform: env::platform(),
        }
    }

    /// The configuration's digest, computed once for these settings, interpreter and
    /// lanser.toml layers (the server files are read again after a `reload`).
    fn config_digest(&mut self, ground: &Ground, python: &Python) -> String {
        let layers = ground.config.file_digests();
        let key = format!("{}|{:?}|{layers:?}", self.settings, python.exe);
        match &self.config_digest {
            Some((k, digest)) if *k == key => digest.clone(),
            _ => {
                let digest = env::config_digest_with(&ground.ws, &self.settings, python, &layers);
                self.config_digest = Some((key, digest.clone()));
                digest
            }
        }
    }

    /// The running (or resolved) server's name and version.
    /// `None` while no session runs: a bundle names only a server that answered it.
    pub fn server_id(&self) -> Option<ServerId> {
        self.session.as_ref()?;
        let package = self.spec.as_ref().and_then(|s| s.package.clone());
        let (info_name, info_version) = self
            .session
            .as_ref()
            .map(Session::server_info)
            .unwrap_or((None, None));
        let name = info_name
            .or_else(|| package.as_ref().map(|p| p.0.clone()))
            .or_else(|| {
                let configured = self.spec.as_ref()?.source.is_command();
                configured.then(|| self.def.name.clone())
            })
            .or_else(|| {
                let cmd = self.spec.as_ref()?.command.last()?.clone();
                Some(cmd.rsplit('/').next().unwrap_or(&cmd).to_string())
            })?;
        let version = package.map(|p| p.1).or(info_version);
        Some(ServerId { name, version })
    }

    /// The interpreter's facts, when the probe has answered.
    pub fn probed_python(&self) -> Option<&Python> {
        self.python.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orchestrator::{Options, Orchestrator};
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
