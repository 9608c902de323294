//! What a durable, journaled write needs of the file system, per platform: keeping a file's
//! permission bits, making a rename durable, and renaming over a file another process has
//! open for a moment (Windows).

use std::fs;
use std::path::Path;

/// Make the renames in `dir` durable. Unix only: Windows cannot open a directory as a file
/// (without backup semantics) nor flush one, and NTFS journals the metadata of a rename.
pub fn fsync_dir(dir: &Path) {
    if cfg!(unix) {
        if let Ok(f) = fs::File::open(dir) {
            let _ = f.sync_all();
        }
    }
}

/// The permission bits a rewrite keeps (Unix). Windows has only the read-only flag, and a
/// read-only file is refused before anything is written (`apply::verify`).
pub fn mode_of(meta: &fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

pub fn set_mode(f: &fs::File, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (f, mode);
        Ok(())
    }
}

/// `fs::rename`. On Windows (`MoveFileExW` replacing an existing target) a rename fails while
/// another process has either file open without delete sharing — a virus scanner or an
/// indexer, for a moment — so a refused rename is tried again for up to a second there.
pub fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut tries = 0;
    loop {
        match fs::rename(from, to) {
            // ERROR_SHARING_VIOLATION (32) or ERROR_ACCESS_DENIED (5, PermissionDenied).
            Err(e)
                if cfg!(windows)
                    && tries < 20
                    && (e.kind() == std::io::ErrorKind::PermissionDenied
                        || e.raw_os_error() == Some(32)) =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}
