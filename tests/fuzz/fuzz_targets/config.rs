//! `lanser.toml` from arbitrary bytes: never a panic; a refusal is one line naming the file
//! or the server; an accepted file layers idempotently (the same file twice gives the same
//! servers) and every server it defines answers `handles` (`cargo +nightly fuzz run config`).
#![no_main]

use lanser::config::{Config, Origin};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    let mut once = Config::builtin();
    let path = PathBuf::from("/w/lanser.toml");
    match once.add_file(Origin::Workspace, path.clone(), data) {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.trim().is_empty());
            assert!(!msg.contains('\n'), "a multi-line refusal: {msg:?}");
        }
        Ok(()) => {
            let mut twice = once.clone();
            twice
                .add_file(Origin::Workspace, path, data)
                .expect("a file accepted once is accepted twice");
            assert_eq!(
                format!("{:?}", once.servers),
                format!("{:?}", twice.servers)
            );
            assert_eq!(once.default, twice.default);
            match once.select(None) {
                Ok(def) => assert_eq!(def.name, once.default),
                Err(e) => assert!(!e.to_string().contains('\n')),
            }
            for def in once.servers.values() {
                let _ = def.handles("pkg/a.py");
                let _ = def.handles("");
                assert!(!def.command.trim().is_empty());
            }
        }
    }
});
