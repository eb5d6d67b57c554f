//! The file a path rule's call will open (CONFORMANCE B6): the path resolved against the
//! working directory, `.` and `..` removed, symbolic links followed as far as the path exists.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// How many symbolic links are followed before the path counts as a loop (Linux's limit).
const MAX_LINKS: usize = 40;

/// `path` (absolute, or relative to `cwd`) as written: `.` and `..` removed, nothing read from
/// the disk.
pub(crate) fn written(cwd: &Path, path: &str) -> PathBuf {
    normalize(&cwd.join(path))
}

/// The file `path` (absolute, or relative to `cwd`) names on the disk: its longest existing
/// part with every symbolic link followed (a link whose target does not exist included), then
/// the rest with `.` and `..` removed.
pub(crate) fn resolved(cwd: &Path, path: &str) -> PathBuf {
    resolve(cwd.join(path), 0)
}

fn resolve(path: PathBuf, links: usize) -> PathBuf {
    let components: Vec<OsString> = path.components().map(|c| c.as_os_str().to_owned()).collect();
    for existing in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..existing].iter().collect();
        let Ok(real) = std::fs::canonicalize(&prefix) else { continue };
        let rest: PathBuf = components[existing..].iter().collect();
        // The next component may be a link whose target does not exist: follow it too.
        if let Some(next) = components.get(existing) {
            let candidate = real.join(next);
            if links < MAX_LINKS
                && std::fs::symlink_metadata(&candidate).is_ok_and(|meta| meta.file_type().is_symlink())
                && let Ok(target) = std::fs::read_link(&candidate)
            {
                let after: PathBuf = components[existing + 1..].iter().collect();
                return resolve(real.join(target).join(after), links + 1);
            }
        }
        return normalize(&real.join(rest));
    }
    normalize(&path)
}

/// `path` without `.` and `..` components (without touching the disk).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
