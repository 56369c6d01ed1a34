//! The one way memlab writes a file, and the one rule for a folder it
//! loads code from. A file is created exclusively (`O_EXCL`), never
//! through a link (`O_NOFOLLOW`): a whole file under a temporary name no
//! one can predict, then renamed over its name (a link planted there is
//! replaced, never followed); a file written as it grows (a segment, a
//! log) under a name that must not exist yet.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Writes `bytes` to `path` whole or not at all: to a file of a random
/// name beside it, created exclusively, then renamed over `path`. A
/// failed write (a full disk) leaves nothing behind.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Short, so a long file name still fits with the random part.
    let prefix: String = format!(".{}", name.chars().take(40).collect::<String>());
    let mut file =
        tempfile::Builder::new().prefix(&prefix).suffix(".partial").permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644)).tempfile_in(dir)?;
    file.write_all(bytes)?;
    file.flush()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `path` for writing as it grows: it must not exist, not even
/// as a link. `flags` are more `open` flags (`O_DIRECT`), or 0.
pub fn create_new(path: &Path, flags: i32) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o644).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | flags).open(path)
}

/// Opens (or creates) a lock file, never through a link.
pub fn lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o644).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// Makes `dir` (mode 0700 where it is new) and holds it and its parent
/// to be folders of this user that no other user may write: code loaded
/// from it (a native build, a compiled component) runs with this user's
/// rights, and a plain hash of it can be recomputed by anyone who may
/// write there. A parent with the sticky bit (`/tmp`) is allowed: no
/// other user may rename or remove what is ours in it.
pub fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let me = nix::unistd::geteuid().as_raw();
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    for (folder, own) in [(Some(dir), true), (parent, false)].into_iter().filter_map(|(f, own)| f.map(|f| (f, own))) {
        let meta = std::fs::symlink_metadata(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        let sticky = !own && meta.mode() & 0o1000 != 0;
        let why = if !meta.is_dir() {
            "is not a folder (a link?)".to_string()
        } else if own && meta.uid() != me || !own && meta.uid() != me && meta.uid() != 0 {
            format!("belongs to user {}, not to you", meta.uid())
        } else if meta.mode() & 0o022 != 0 && !sticky {
            format!("other users may write to it (mode {:o})", meta.mode() & 0o7777)
        } else {
            continue;
        };
        return Err(format!("{} {why}", folder.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::{create_new, private_dir, write_whole};

    #[test]
    fn a_whole_write_replaces_a_planted_link_and_never_follows_it() {
        let dir = tempfile::tempdir().expect("temp");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"theirs").expect("victim");
        let path = dir.path().join("run.json");
        std::os::unix::fs::symlink(&victim, &path).expect("plant");
        write_whole(&path, b"ours").expect("written");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"theirs");
        assert_eq!(std::fs::read(&path).expect("ours"), b"ours");
        assert!(!std::fs::symlink_metadata(&path).expect("meta").file_type().is_symlink());
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 2, "no temporary file is left: {left:?}");
    }

    #[test]
    fn a_growing_file_is_never_opened_through_a_link() {
        let dir = tempfile::tempdir().expect("temp");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"theirs").expect("victim");
        let path = dir.path().join("segment.data");
        std::os::unix::fs::symlink(&victim, &path).expect("plant");
        assert!(create_new(&path, 0).is_err());
        assert_eq!(std::fs::read(&victim).expect("victim"), b"theirs");
    }

    #[test]
    fn a_private_folder_is_this_users_alone() {
        let base = tempfile::tempdir().expect("temp");
        let dir = base.path().join("cache");
        private_dir(&dir).expect("made private");
        assert_eq!(std::fs::metadata(&dir).expect("dir").permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let refused = private_dir(&dir).expect_err("others may write there");
        assert!(refused.contains("other users may write to it (mode 777)"), "{refused}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o1777)).expect("sticky parent");
        private_dir(&dir).expect("a sticky parent is allowed");
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o777)).expect("open parent");
        assert!(private_dir(&dir).is_err(), "a parent anyone may rename it in");
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&dir, Some(65534), None).expect("chown");
            let refused = private_dir(&dir).expect_err("another user's folder");
            assert!(refused.contains("belongs to user 65534"), "{refused}");
        }
    }
}
