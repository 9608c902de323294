//! Paths ↔ `file://` URIs, and whether a path lies under a root, for a platform's path
//! [`Style`] (docs/workspace.md#paths-in-bundles).
//!
//! The conversions are pure functions of the path's text and a style, so Windows' rules are
//! tested on every platform: `C:\a\b.py` ↔ `file:///C:/a/b.py` (the drive upper-cased, its
//! colon kept; `file:///c%3A/a/b.py`, as VS Code and some servers spell it, read too), a UNC
//! share `\\host\share\x` ↔ `file://host/share/x`, and a verbatim `\\?\C:\…` (what
//! `canonicalize` gives on Windows) read as `C:\…`. Under [`Style::POSIX`] every function
//! does exactly what lanser always did on Linux. Where the file system ignores case (Windows,
//! macOS's default APFS) a path is under a root whatever the case of the root's part.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// How a platform spells paths, and whether its file systems ignore case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Drive letters, `\` separators, UNC shares and verbatim (`\\?\`) prefixes.
    pub windows: bool,
    /// Paths that differ only in case name the same file.
    pub fold_case: bool,
}

impl Style {
    /// Linux and the other Unixes.
    pub const POSIX: Style = Style {
        windows: false,
        fold_case: false,
    };
    /// macOS: POSIX paths on a case-insensitive (default APFS) file system.
    pub const MACOS: Style = Style {
        windows: false,
        fold_case: true,
    };
    pub const WINDOWS: Style = Style {
        windows: true,
        fold_case: true,
    };
    /// This build's platform.
    pub const NATIVE: Style = if cfg!(windows) {
        Style::WINDOWS
    } else if cfg!(target_os = "macos") {
        Style::MACOS
    } else {
        Style::POSIX
    };
}

/// Percent-encode a path into a `file://` URI (RFC 3986 unreserved characters and `/` kept;
/// under Windows' style a drive's colon too).
pub fn to_uri(path: &str, style: Style) -> String {
    let mut out = String::from("file://");
    if !style.windows {
        let s = path.replace('\\', "/");
        if !s.starts_with('/') {
            out.push('/');
        }
        encode_into(&mut out, &s);
        return out;
    }
    let s = strip_verbatim(path).replace('\\', "/");
    if let Some(share) = s.strip_prefix("//") {
        // A UNC share: its host is the URI's authority.
        encode_into(&mut out, share);
    } else if let Some((drive, rest)) = drive_of(&s) {
        out.push('/');
        out.push(drive.to_ascii_uppercase());
        out.push(':');
        encode_into(&mut out, rest);
    } else {
        if !s.starts_with('/') {
            out.push('/');
        }
        encode_into(&mut out, &s);
    }
    out
}

fn encode_into(out: &mut String, s: &str) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

/// Decode `%XX` escapes; `None` on a malformed escape or a non-UTF-8 result.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Decode a `file://` URI into a path; `None` for other schemes or bad escapes.
pub fn from_uri(uri: &str, style: Style) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let decoded = percent_decode(rest)?;
    if !style.windows {
        return Some(decoded);
    }
    let Some(abs) = decoded.strip_prefix('/') else {
        // `file://host/share/x`: a UNC share.
        return Some(format!(r"\\{}", decoded.replace('/', r"\")));
    };
    Some(match drive_of(abs) {
        Some((drive, rest)) if rest.is_empty() || rest.starts_with('/') => {
            let rest = if rest.is_empty() { "/" } else { rest };
            format!("{}:{}", drive.to_ascii_uppercase(), rest.replace('/', r"\"))
        }
        // Rooted on the current drive.
        _ => decoded.replace('/', r"\"),
    })
}

/// The one spelling of a `file://` URI that [`to_uri`] gives, so that a server's spelling
/// (`file:///c%3A/a.py`) and lanser's (`file:///C:/a.py`) of one file are one key. Under
/// POSIX style the URI as it is.
pub fn normalize(uri: &str, style: Style) -> Cow<'_, str> {
    if !style.windows {
        return Cow::Borrowed(uri);
    }
    match from_uri(uri, style) {
        Some(path) => Cow::Owned(to_uri(&path, style)),
        None => Cow::Borrowed(uri),
    }
}

/// `C:…` → (`C`, `…`).
fn drive_of(s: &str) -> Option<(char, &str)> {
    let b = s.as_bytes();
    (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
        .then(|| (char::from(b[0]), &s[2..]))
}

/// `\\?\C:\x` → `C:\x`, `\\?\UNC\host\share` → `\\host\share`; other paths as they are.
pub fn strip_verbatim(path: &str) -> Cow<'_, str> {
    if let Some(rest) = path.strip_prefix(r"\\?\") {
        if let Some(share) = rest.strip_prefix(r"UNC\") {
            return Cow::Owned(format!(r"\\{share}"));
        }
        if drive_of(rest).is_some() {
            return Cow::Borrowed(rest);
        }
    }
    Cow::Borrowed(path)
}

/// The relative path (`/`-separated) of `path` under `root`, `""` for the root itself; `None`
/// when it is not under it or the rest is not plain names (`..`). Under POSIX style, exactly
/// [`Path::strip_prefix`] with plain names; else compared component by component, a
/// verbatim prefix and `\` or `/` alike, the case folded where `style.fold_case`.
pub fn relative(root: &Path, path: &Path, style: Style) -> Option<String> {
    if style == Style::POSIX {
        let rel = path.strip_prefix(root).ok()?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        return Some(parts.join("/"));
    }
    let (root, path) = (root.to_string_lossy(), path.to_string_lossy());
    relative_str(&root, &path, style)
}

/// [`relative`] on the paths' text (any style but POSIX).
pub fn relative_str(root: &str, path: &str, style: Style) -> Option<String> {
    let parts = |s: &str| -> Vec<String> {
        let s = if style.windows {
            strip_verbatim(s).replace('\\', "/")
        } else {
            s.to_string()
        };
        // A leading `//` (a UNC share) is kept apart from a rooted `/`.
        let unc = style.windows && s.starts_with("//");
        let mut out: Vec<String> = s
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_string)
            .collect();
        if s.starts_with('/') {
            out.insert(0, if unc { "//" } else { "/" }.to_string());
        }
        out
    };
    let (root, path) = (parts(root), parts(path));
    if path.len() < root.len() {
        return None;
    }
    let same = |a: &String, b: &String| {
        if style.fold_case {
            a == b || a.to_lowercase() == b.to_lowercase()
        } else {
            a == b
        }
    };
    if !root.iter().zip(&path).all(|(a, b)| same(a, b)) {
        return None;
    }
    let rest = &path[root.len()..];
    if rest.iter().any(|p| p == ".." || p == "/" || p == "//") {
        return None;
    }
    Some(rest.join("/"))
}

/// `path` canonicalized: absolute, symlinks resolved; on Windows without the verbatim `\\?\`
/// prefix where the plain spelling names the same file (a drive path under 260 characters
/// without reserved names or trailing dots), so it compares and prints as users write it.
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    let canon = path.canonicalize()?;
    if !cfg!(windows) {
        return Ok(canon);
    }
    Ok(plain_windows(&canon.to_string_lossy())
        .map(PathBuf::from)
        .unwrap_or(canon))
}

/// The plain spelling of a verbatim Windows drive path, when it names the same file.
fn plain_windows(s: &str) -> Option<String> {
    let rest = s.strip_prefix(r"\\?\")?;
    let (_, tail) = drive_of(rest)?;
    if rest.len() >= 260 || !(tail.is_empty() || tail.starts_with('\\')) {
        return None;
    }
    const RESERVED: &[&str] = &[
        "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
        "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
    ];
    let plain = tail.split('\\').filter(|c| !c.is_empty()).all(|c| {
        let stem = c.split('.').next().unwrap_or(c).trim_end().to_lowercase();
        !c.ends_with('.') && !c.ends_with(' ') && !RESERVED.contains(&stem.as_str())
    });
    plain.then(|| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Style = Style::WINDOWS;

    #[test]
    fn posix_round_trip_with_unicode_and_spaces() {
        let uri = to_uri("/tmp/a b/形状.py", Style::POSIX);
        assert_eq!(uri, "file:///tmp/a%20b/%E5%BD%A2%E7%8A%B6.py");
        assert_eq!(from_uri(&uri, Style::POSIX).unwrap(), "/tmp/a b/形状.py");
        // A colon is encoded in a POSIX path, as it always was.
        assert_eq!(to_uri("/w/a:b.py", Style::POSIX), "file:///w/a%3Ab.py");
        assert_eq!(normalize("file:///c%3A/x", Style::POSIX), "file:///c%3A/x");
    }

    #[test]
    fn windows_drive_paths_and_uris() {
        assert_eq!(to_uri(r"C:\a\b.py", W), "file:///C:/a/b.py");
        assert_eq!(to_uri(r"c:\a b\形.py", W), "file:///C:/a%20b/%E5%BD%A2.py");
        assert_eq!(to_uri(r"\\?\D:\w\x.py", W), "file:///D:/w/x.py");
        assert_eq!(to_uri("C:/mixed\\seps.py", W), "file:///C:/mixed/seps.py");
        for uri in [
            "file:///C:/a/b.py",
            "file:///c:/a/b.py",
            "file:///c%3A/a/b.py",
            "file:///C%3a/a/b.py",
            "file://localhost/C:/a/b.py",
        ] {
            assert_eq!(from_uri(uri, W).unwrap(), r"C:\a\b.py", "{uri}");
            assert_eq!(normalize(uri, W), "file:///C:/a/b.py", "{uri}");
        }
        assert_eq!(from_uri("file:///C:", W).unwrap(), r"C:\");
        assert_eq!(from_uri("file:///C:/", W).unwrap(), r"C:\");
        assert_eq!(
            from_uri("file:///C:/a%20b/%E5%BD%A2.py", W).unwrap(),
            r"C:\a b\形.py"
        );
        assert_eq!(from_uri("untitled:x", W), None);
        assert_eq!(from_uri("file:///C:/bad%zz", W), None);
    }

    #[test]
    fn windows_unc_and_rooted_paths() {
        assert_eq!(to_uri(r"\\host\share\x.py", W), "file://host/share/x.py");
        assert_eq!(
            to_uri(r"\\?\UNC\host\share\x.py", W),
            "file://host/share/x.py"
        );
        assert_eq!(
            from_uri("file://host/share/x.py", W).unwrap(),
            r"\\host\share\x.py"
        );
        assert_eq!(from_uri("file:///tmp/x.py", W).unwrap(), r"\tmp\x.py");
        assert_eq!(to_uri(r"\tmp\x.py", W), "file:///tmp/x.py");
    }

    #[test]
    fn verbatim_prefixes() {
        assert_eq!(strip_verbatim(r"\\?\C:\w"), r"C:\w");
        assert_eq!(strip_verbatim(r"\\?\UNC\h\s\x"), r"\\h\s\x");
        assert_eq!(strip_verbatim(r"\\?\Volume{x}\a"), r"\\?\Volume{x}\a");
        assert_eq!(strip_verbatim("/tmp/x"), "/tmp/x");
        assert_eq!(
            plain_windows(r"\\?\C:\w\a.py").as_deref(),
            Some(r"C:\w\a.py")
        );
        assert_eq!(plain_windows(r"\\?\C:\").as_deref(), Some(r"C:\"));
        for kept in [r"\\?\C:\w\con.txt", r"\\?\C:\w\a.", r"\\?\C:\w\a ", r"C:\w"] {
            assert_eq!(plain_windows(kept), None, "{kept}");
        }
        let long = format!(r"\\?\C:\{}", "a".repeat(300));
        assert_eq!(plain_windows(&long), None);
    }

    #[test]
    fn relative_under_a_root() {
        let rel = |r: &str, p: &str, s| relative(Path::new(r), Path::new(p), s);
        // POSIX: byte for byte, case and all.
        assert_eq!(
            rel("/w/p", "/w/p/src/a.py", Style::POSIX).unwrap(),
            "src/a.py"
        );
        assert_eq!(rel("/w/p", "/w/p", Style::POSIX).unwrap(), "");
        assert_eq!(rel("/w/p", "/w/P/src/a.py", Style::POSIX), None);
        assert_eq!(rel("/w/p", "/w/pq/a.py", Style::POSIX), None);
        assert_eq!(rel("/w/p", "/w/p/../a.py", Style::POSIX), None);
        // macOS: the root's case folded, the rest kept as spelled.
        assert_eq!(
            rel("/Users/u/Proj", "/users/u/proj/Src/A.py", Style::MACOS).unwrap(),
            "Src/A.py"
        );
        assert_eq!(rel("/w/p", "/w/pq/a.py", Style::MACOS), None);
        // Windows: drive case, separators and verbatim prefixes alike.
        let w = |r: &str, p: &str| relative_str(r, p, W);
        assert_eq!(
            w(r"C:\Users\u\proj", r"c:\users\U\Proj\src\a.py").unwrap(),
            "src/a.py"
        );
        assert_eq!(w(r"C:\w\p", r"\\?\C:\w\p\pkg\m.py").unwrap(), "pkg/m.py");
        assert_eq!(w(r"C:\w\p", "C:/w/p/pkg/m.py").unwrap(), "pkg/m.py");
        assert_eq!(w(r"C:\w\p", r"C:\w\p").unwrap(), "");
        assert_eq!(w(r"C:\w\p", r"D:\w\p\a.py"), None);
        assert_eq!(w(r"C:\w\p", r"C:\w\pq\a.py"), None);
        assert_eq!(w(r"C:\w\p", r"C:\w\p\..\x.py"), None);
        assert_eq!(w(r"\\h\s\p", r"\\?\UNC\h\s\p\a.py").unwrap(), "a.py");
        assert_eq!(w(r"\\h\s\p", r"\h\s\p\a.py"), None);
    }
}
