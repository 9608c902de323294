//! The words of the Python code outside the workspace that Pyright reads: its bundled typeshed
//! and the interpreter's import path (`sys.path`: the standard library, site-packages, what
//! `.pth` files add), kept as a Bloom filter — "this word occurs nowhere there" is a sure
//! answer, "it may" a cautious one. [`crate::measure::fresh`] asks it whether a new method's
//! name is named anywhere a protocol, a base class or a sibling base could declare it. Beside
//! it, a smaller filter of the names the protocols there declare ([`protocols`]):
//! [`crate::measure::narrow`] asks it whether a changed method's name can make a class fit a
//! protocol or stop fitting it.
//!
//! Both built once per state of those directories and kept in lanser's home (`words/`, 4 MiB
//! and 128 KiB per state), so every process and copy of a workspace on the machine shares them.
//! The state is read from metadata: for a directory the package manager owns (under the
//! interpreter's prefix, or the typeshed) its entries' names and modification times, which an
//! install, an upgrade or an uninstall changes; for any other directory on the path (an
//! editable install's sources, a `.pth` entry) every Python file's size and modification time.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Bits in the filter: 2^25 (4 MiB), in blocks of one cache line (512 bits) — a word's
/// [`HASHES`] bits are all in one block, so adding the words of 150 MB of code costs one
/// memory miss per distinct word of a file, not seven. With the ~2 million distinct words of a
/// large environment a word that is absent is taken for present about once in a thousand asks
/// (then the rule re-checks, as it would without the filter).
const BITS: u64 = 1 << 25;
/// Bits in the filter of the protocols' names: 2^20 (128 KiB) for the few thousand a large
/// environment's protocols declare.
const PROTOCOL_BITS: u64 = 1 << 20;
const BLOCK: u64 = 512;
const HASHES: u64 = 7;

/// The words of the library code, as a Bloom filter.
pub struct Words {
    bits: Vec<u64>,
}

impl Words {
    fn empty(bits: u64) -> Words {
        Words {
            bits: vec![0; (bits / 64) as usize],
        }
    }

    /// The filter's bits for `word`: a block from one FNV-1a hash, and [`HASHES`] positions in
    /// it from nine-bit slices of another.
    fn probes(&self, word: &[u8]) -> impl Iterator<Item = u64> {
        let fnv = |basis: u64| {
            word.iter().fold(basis, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            })
        };
        let (a, b) = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4));
        let blocks = self.bits.len() as u64 * 64 / BLOCK;
        let block = (a % blocks) * BLOCK;
        (0..HASHES).map(move |i| block + ((b >> (i * 9)) % BLOCK))
    }

    fn insert(&mut self, word: &[u8]) {
        let probes: Vec<u64> = self.probes(word).collect();
        for p in probes {
            self.bits[(p / 64) as usize] |= 1 << (p % 64);
        }
    }

    /// Whether `word` may be in the filter (false: it surely is not).
    pub fn may_contain(&self, word: &str) -> bool {
        self.probes(word.as_bytes())
            .all(|p| self.bits[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }

    /// Every word of a file's `bytes` (as [`super::surface::words`] splits its text), each
    /// distinct one once.
    fn add_file(&mut self, bytes: &[u8]) {
        let mut distinct: HashSet<&[u8]> = HashSet::new();
        if bytes.is_ascii() {
            let inner = |b: &u8| *b == b'_' || b.is_ascii_alphanumeric();
            distinct.extend(bytes.split(|b| !inner(b)).filter(|w| !w.is_empty()));
            distinct.into_iter().for_each(|w| self.insert(w));
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let words = text.split(|c: char| !(c == '_' || c.is_alphanumeric()));
        distinct.extend(words.filter(|w| !w.is_empty()).map(str::as_bytes));
        distinct.into_iter().for_each(|w| self.insert(w));
    }

    fn to_bytes(&self) -> Vec<u8> {
        self.bits.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn from_bytes(bytes: &[u8], bits: u64) -> Option<Words> {
        if bytes.len() as u64 != bits / 8 {
            return None;
        }
        let bits = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        Some(Words { bits })
    }
}

/// Where the library code is: directories walked for words, and whether the package manager
/// owns each (then its entries' metadata stand for its state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    dirs: Vec<(PathBuf, bool)>,
}

/// The interpreter's import path and prefixes, as it reports them.
#[derive(Debug, Clone)]
struct Interpreter {
    path: Vec<PathBuf>,
    prefixes: Vec<PathBuf>,
}

/// The library roots Pyright reads for a workspace at `ws_root`: the typeshed beside the
/// server `command` runs, and the import path of `python` — but for a directory inside the
/// workspace that the workspace's own files already cover (`covered`: the index walks it; a
/// virtual environment or an ignored directory there is not walked, so it is a root here).
/// `None` when either cannot be told (no typeshed found, no interpreter, or an archive on the
/// path: its words cannot be read), and then nothing is vouched for.
pub fn roots(
    python: Option<&str>,
    command: &[String],
    ws_root: &Path,
    covered: &dyn Fn(&Path) -> bool,
) -> Option<Roots> {
    let typeshed = command
        .iter()
        .find_map(|arg| typeshed_near(Path::new(arg)))?;
    let probe = interpreter(python?)?;
    let mut dirs = vec![(typeshed, true)];
    for p in &probe.path {
        if p.is_file() {
            return None;
        }
        let Ok(p) = p.canonicalize() else { continue };
        let inside = p.starts_with(ws_root) && covered(&p);
        if !p.is_dir() || inside || dirs.iter().any(|(d, _)| d == &p) {
            continue;
        }
        let owned = probe.prefixes.iter().any(|x| p.starts_with(x));
        dirs.push((p, owned));
    }
    Some(Roots { dirs })
}

/// The `typeshed-fallback` of the Pyright package a server command runs from, if any.
fn typeshed_near(arg: &Path) -> Option<PathBuf> {
    let start = arg.canonicalize().ok()?;
    start.ancestors().take(6).find_map(|a| {
        [
            a.join("typeshed-fallback"),
            a.join("dist/typeshed-fallback"),
            a.join("node_modules/pyright/dist/typeshed-fallback"),
            a.join("lib/node_modules/pyright/dist/typeshed-fallback"),
        ]
        .into_iter()
        .find(|t| t.join("stdlib").is_dir())
    })
}

/// `sys.path` and the prefixes of the interpreter `exe`, asked once per process.
fn interpreter(exe: &str) -> Option<Interpreter> {
    static SEEN: OnceLock<Mutex<HashMap<String, Option<Interpreter>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(p) = seen.lock().ok()?.get(exe) {
        return p.clone();
    }
    let script = "import sys, json; print(json.dumps([sys.path, [sys.prefix, sys.base_prefix]]))";
    let out = std::process::Command::new(exe)
        .args(["-c", script])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success());
    let parsed = out.and_then(|o| {
        let (path, prefixes): (Vec<String>, Vec<String>) =
            serde_json::from_slice(&o.stdout).ok()?;
        let abs = |v: Vec<String>| -> Vec<PathBuf> {
            v.into_iter()
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|p| p.canonicalize().unwrap_or(p))
                .collect()
        };
        Some(Interpreter {
            path: abs(path),
            prefixes: abs(prefixes),
        })
    });
    seen.lock().ok()?.insert(exe.to_string(), parsed.clone());
    parsed
}

/// The bytes the filters kept in lanser's home may take: fifteen environment states (both
/// filters of each); the least recently used goes first.
const KEPT: u64 = 64 << 20;

/// The words of the code under `roots`: from this process's memory, else lanser's home, else
/// read now (and kept in both).
pub fn words(roots: &Roots) -> Arc<Words> {
    filters(roots).0
}

/// The names the protocols in the code under `roots` declare (every `def` and assignment in
/// the body of a class listing `Protocol` among its bases, [`super::methods::protocol_members`]),
/// kept as [`words`] is.
pub fn protocols(roots: &Roots) -> Arc<Words> {
    filters(roots).1
}

/// Both filters of `roots`, built together.
fn filters(roots: &Roots) -> (Arc<Words>, Arc<Words>) {
    type Built = HashMap<String, (Arc<Words>, Arc<Words>)>;
    static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let key = state(roots);
    // One build at a time: a second asker waits for it instead of reading the same files.
    let mut map = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(w) = map.get(&key) {
        return w.clone();
    }
    let dir = crate::home::lanser_home().join("words");
    let (file, pfile) = (
        dir.join(format!("{key}.bloom")),
        dir.join(format!("{key}.protocols")),
    );
    let kept =
        |f: &Path, bits: u64| crate::home::read_kept(f).and_then(|b| Words::from_bytes(&b, bits));
    let found = match (kept(&file, BITS), kept(&pfile, PROTOCOL_BITS)) {
        (Some(w), Some(p)) => (Arc::new(w), Arc::new(p)),
        _ => {
            let (w, p) = build(roots);
            crate::home::keep_bounded(&file, &w.to_bytes(), KEPT);
            crate::home::keep_bounded(&pfile, &p.to_bytes(), KEPT);
            (Arc::new(w), Arc::new(p))
        }
    };
    map.insert(key, found.clone());
    found
}

/// Read every Python file under `roots` (a root nested in another is read once): its words,
/// and the names its protocols declare when it mentions `Protocol`.
fn build(roots: &Roots) -> (Words, Words) {
    let mut words = Words::empty(BITS);
    let mut protocols = Words::empty(PROTOCOL_BITS);
    let skip: Vec<&Path> = roots.dirs.iter().map(|(d, _)| d.as_path()).collect();
    for (dir, _) in &roots.dirs {
        walk(dir, &skip, &mut |p| {
            let Ok(bytes) = std::fs::read(p) else {
                return;
            };
            words.add_file(&bytes);
            if mentions_protocol(&bytes) {
                let text = String::from_utf8_lossy(&bytes);
                for name in super::methods::protocol_members(&text) {
                    protocols.insert(name.as_bytes());
                }
            }
        });
    }
    (words, protocols)
}

/// Whether `bytes` has the word `Protocol` (whole: not `BaseProtocol`, `Protocols`): a class
/// that is a protocol names it, or an alias bound from it.
fn mentions_protocol(bytes: &[u8]) -> bool {
    let inner = |b: Option<&u8>| b.is_some_and(|b| *b == b'_' || b.is_ascii_alphanumeric());
    bytes
        .windows(8)
        .enumerate()
        .filter(|(_, w)| *w == b"Protocol")
        .any(|(at, _)| {
            !inner(at.checked_sub(1).and_then(|i| bytes.get(i))) && !inner(bytes.get(at + 8))
        })
}

/// Call `each` for every `.py`/`.pyi` file below `dir`, not entering the other roots in `skip`
/// (read on their own) nor following links to directories (no cycles).
fn walk(dir: &Path, skip: &[&Path], each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if !skip.contains(&p.as_path()) {
                walk(&p, skip, each);
            }
        } else if is_source(&p) {
            each(&p);
        }
    }
}

fn is_source(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("py" | "pyi"))
}

/// A digest of the state of `roots` (see the module's doc): the key of their words.
fn state(roots: &Roots) -> String {
    let mut h = format!("words v3 {BITS} {PROTOCOL_BITS} {BLOCK} {HASHES}\n");
    let skip: Vec<&Path> = roots.dirs.iter().map(|(d, _)| d.as_path()).collect();
    for (dir, owned) in &roots.dirs {
        h.push_str(&format!("{}\n", dir.display()));
        if *owned {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .map(|r| r.flatten().collect())
                .unwrap_or_default();
            entries.sort_by_key(|e| e.file_name());
            for e in std::iter::once(dir.to_path_buf()).chain(entries.iter().map(|e| e.path())) {
                h.push_str(&format!("{} {}\n", e.display(), stamp(&e)));
            }
        } else {
            walk(dir, &skip, &mut |p| {
                h.push_str(&format!("{} {}\n", p.display(), stamp(p)));
            });
        }
    }
    crate::digest::sha256_hex(h.as_bytes())
}

/// A path's size and modification time, as text.
fn stamp(p: &Path) -> String {
    match std::fs::metadata(p) {
        Ok(m) => {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {t}", m.len())
        }
        Err(_) => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_read_is_found_and_one_never_read_is_not() {
        let mut w = Words::empty(BITS);
        w.add_file(b"class SupportsRead(Protocol):\n    def read(self, n: int = -1) -> str: ...\n");
        w.add_file("# \u{2014}caf\u{e9}\u{2014} d\u{e9}j\u{e0}_vu = 1\n".as_bytes());
        for word in ["SupportsRead", "Protocol", "read", "n", "str", "self"] {
            assert!(w.may_contain(word), "{word}");
        }
        assert!(w.may_contain("caf\u{e9}") && w.may_contain("d\u{e9}j\u{e0}_vu"));
        for word in ["_lanser_helper_14", "readline", "Read", "rea", "caf"] {
            assert!(!w.may_contain(word), "{word}");
        }
        let back = Words::from_bytes(&w.to_bytes(), BITS).unwrap();
        assert!(back.may_contain("read") && !back.may_contain("readline"));
    }

    #[test]
    fn a_changed_file_outside_the_prefixes_changes_the_state() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("pkg")).unwrap();
        std::fs::write(src.join("pkg/m.py"), "def f(): ...\n").unwrap();
        let roots = Roots {
            dirs: vec![(src.clone(), false)],
        };
        let before = state(&roots);
        assert_eq!(state(&roots), before);
        std::fs::write(src.join("pkg/m.py"), "def f(): ...\ndef helper(): ...\n").unwrap();
        assert_ne!(state(&roots), before);
        assert!(build(&roots).0.may_contain("helper"));
    }

    #[test]
    fn the_protocols_filter_holds_what_protocols_declare() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("io.pyi"),
            "from typing import Protocol\n\nclass SupportsReadInto(Protocol):\n    def read_into(self, b: bytes) -> int: ...\n\nclass Writer:\n    def write_out(self) -> None: ...\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("plain.py"),
            "class P:\n    def peek(self): ...\n",
        )
        .unwrap();
        let roots = Roots {
            dirs: vec![(dir.path().to_path_buf(), false)],
        };
        let (words, protocols) = build(&roots);
        assert!(protocols.may_contain("read_into"));
        for name in ["write_out", "peek", "b", "SupportsReadInto"] {
            assert!(words.may_contain(name), "{name}");
            assert!(!protocols.may_contain(name), "{name}");
        }
        assert!(mentions_protocol(b"x: typing.Protocol") && mentions_protocol(b"Protocol"));
        assert!(!mentions_protocol(b"class A(BaseProtocol, Protocols): ..."));
        let back = Words::from_bytes(&protocols.to_bytes(), PROTOCOL_BITS).unwrap();
        assert!(back.may_contain("read_into") && !back.may_contain("peek"));
    }
}
