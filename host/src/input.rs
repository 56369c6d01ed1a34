//! The one way memlab reads a file it did not just write: a record, a
//! run directory's files, a config, a profile, a stream, a segment, a
//! component, a cache entry. Such a file is untrusted input: it may be a
//! FIFO that never ends a read, `/dev/zero`, a link out of its directory,
//! or far larger than its kind allows. Here it is refused, naming the
//! file and the limit, before it is read whole.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why an untrusted file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A FIFO, a device, a directory: nothing memlab reads.
    #[error("{path}: not a regular file, so it is not read as a {what}")]
    NotRegular {
        /// The file.
        path: String,
        /// What the file was read as.
        what: &'static str,
    },
    /// Larger than its kind may be.
    #[error("{path}: larger than the {limit} bytes a {what} may be")]
    TooLarge {
        /// The file.
        path: String,
        /// What the file was read as.
        what: &'static str,
        /// The most bytes a file of its kind may be.
        limit: u64,
    },
    /// A gzip file of more members than memlab reads.
    #[error("{path}: more than {limit} gzip members, more than a {what} is ever made of")]
    Members {
        /// The file.
        path: String,
        /// What the file was read as.
        what: &'static str,
        /// The most members read.
        limit: usize,
    },
    /// Not the length its metadata promised.
    #[error("{path}: {found} bytes, but its {what} should have {expected}")]
    Length {
        /// The file.
        path: String,
        /// What the file was read as.
        what: &'static str,
        /// What was expected.
        expected: u64,
        /// What was found.
        found: u64,
    },
    /// The operating system's error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl ReadError {
    /// The error without its path, for a message that names the file itself.
    pub fn reason(&self) -> String {
        match self {
            ReadError::NotRegular { what, .. } => format!("not a regular file, so it is not read as a {what}"),
            ReadError::TooLarge { what, limit, .. } => format!("larger than the {limit} bytes a {what} may be"),
            ReadError::Members { what, limit, .. } => format!("more than {limit} gzip members, more than a {what} is ever made of"),
            ReadError::Length { what, expected, found, .. } => format!("{found} bytes, but its {what} should have {expected}"),
            ReadError::Io { source, .. } => source.to_string(),
        }
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// Opens `path` for reading if it is a regular file: opened without
/// blocking (a FIFO with no writer would otherwise hang the open), then
/// checked on the opened file itself, so a swap after the check is no
/// race.
fn open_regular(path: &Path, what: &'static str) -> Result<(std::fs::File, u64), ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| ReadError::Io { path: shown(path), source };
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular { path: shown(path), what });
    }
    Ok((file, meta.len()))
}

/// Reads a regular file of at most `limit` bytes whole; a larger one is
/// refused before it is read.
pub fn read(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let (file, len) = open_regular(path, what)?;
    let too_large = || ReadError::TooLarge { path: shown(path), what, limit };
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // Bounded again: the file may grow while it is read.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|source| ReadError::Io { path: shown(path), source })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads a file that may be gzip-compressed (a record kept as
/// `run.json.gz`): its first bytes say so, not its name. Both the file and
/// what it inflates to are held to `limit`, so a small bomb is refused
/// as too large, not inflated until memory runs out.
pub fn read_inflated(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let bytes = read(path, limit, what)?;
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut inflated = Vec::new();
    // Member by member, counted: a file of a million empty members would
    // inflate to nothing, yet take minutes to walk.
    let mut rest = bytes.as_slice();
    for _ in 0..MAX_GZIP_MEMBERS {
        let mut member = flate2::bufread::GzDecoder::new(rest);
        (&mut member).take(limit + 1 - inflated.len() as u64).read_to_end(&mut inflated).map_err(|source| ReadError::Io { path: shown(path), source })?;
        if inflated.len() as u64 > limit {
            return Err(ReadError::TooLarge { path: shown(path), what, limit });
        }
        rest = member.into_inner();
        if rest.is_empty() {
            return Ok(inflated);
        }
    }
    Err(ReadError::Members { path: shown(path), what, limit: MAX_GZIP_MEMBERS })
}

/// The most gzip members a compressed file may hold: `gzip` writes one,
/// and a few files joined with `cat` make a few.
const MAX_GZIP_MEMBERS: usize = 64;

/// The first two bytes of every gzip member (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a regular file that must hold exactly `len` bytes (what its
/// metadata promised), reading no more than that.
pub fn read_len(path: &Path, len: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let (file, found) = open_regular(path, what)?;
    if found != len {
        return Err(ReadError::Length { path: shown(path), what, expected: len, found });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut bytes).map_err(|source| ReadError::Io { path: shown(path), source })?;
    if bytes.len() as u64 != len {
        return Err(ReadError::Length { path: shown(path), what, expected: len, found: bytes.len() as u64 });
    }
    Ok(bytes)
}

/// Reads at most the first `limit` bytes of a regular file: what a
/// record promises is there, however large the file has grown since.
pub fn read_prefix(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let (file, len) = open_regular(path, what)?;
    let mut bytes = Vec::with_capacity(len.min(limit) as usize);
    file.take(limit).read_to_end(&mut bytes).map_err(|source| ReadError::Io { path: shown(path), source })?;
    Ok(bytes)
}

/// The files and folders a record names in its run directory are one
/// type, with one way to become a path: a crafted record cannot lead
/// `verify`, `show` or a report out of its run, by a root, by `..` or by a
/// link, since no reader can join the name itself.
/// A name under a run directory, as a record keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct RunPath(String);

impl RunPath {
    /// A name memlab itself chose, relative to the run directory (or to a
    /// variant's folder, for a kept log).
    pub fn new(name: impl Into<String>) -> Self {
        RunPath(name.into())
    }

    /// The name as recorded, for display and links.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path under `dir`: refused unless the name is relative, of
    /// plain components, and its target, links followed, is under `dir`.
    /// The canonical target is returned, so what is opened is what was
    /// checked.
    pub fn under(&self, dir: &Path) -> Result<PathBuf, Outside> {
        let refuse = |why: &str| Outside { dir: dir.display().to_string().escape_debug().to_string(), detail: format!("`{self}` {why}") };
        if !self.plain() {
            return Err(refuse("is not a relative name inside the run's directory (no root, no `..`)"));
        }
        let (Ok(base), Ok(target)) = (dir.canonicalize(), dir.join(&self.0).canonicalize()) else {
            return Err(refuse("is not in the run's directory"));
        };
        if !target.starts_with(&base) {
            return Err(refuse("leads out of the run's directory (through a link)"));
        }
        Ok(target)
    }

    /// Whether the name could be under a directory at all: checked when a
    /// record is read, so a bad one is refused before anything runs.
    pub fn plain(&self) -> bool {
        !self.0.is_empty() && Path::new(&self.0).components().all(|c| matches!(c, Component::Normal(_)))
    }
}

impl std::fmt::Display for RunPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Escaped: a name a record gives may hold control characters.
        write!(f, "{}", self.0.escape_debug())
    }
}

/// A name a record gives that leads out of its run.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{dir}: {detail}")]
pub struct Outside {
    /// The directory the name was to be under.
    pub dir: String,
    /// What the name is, and why it is refused.
    pub detail: String,
}

/// A name a report may link to: a relative file name of letters, digits,
/// `-`, `_`, `.` and `/`, with no `..` and no scheme (`javascript:`),
/// or nothing.
pub fn link(named: &str) -> Option<&str> {
    let plain = named.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'));
    let relative = Path::new(named).components().all(|c| matches!(c, Component::Normal(_)));
    (plain && relative && !named.is_empty()).then_some(named)
}

#[cfg(test)]
mod tests {
    use super::{ReadError, RunPath, link, read, read_inflated, read_len, read_prefix};

    #[test]
    fn a_gzip_file_is_inflated_within_the_limit_and_a_bomb_is_refused() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("memlab-input-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("r.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&[b'x'; 4096]).expect("compress");
        std::fs::write(&file, encoder.finish().expect("compress")).expect("write");
        assert_eq!(read_inflated(&file, 4096, "test").expect("inflated"), vec![b'x'; 4096]);
        // Under 100 bytes on disk, 4 KiB inflated: over a 1 KiB limit.
        assert!(matches!(read_inflated(&file, 1024, "test"), Err(ReadError::TooLarge { limit: 1024, .. })));
        // Members joined with `cat` are read in turn; too many are refused.
        let one = std::fs::read(&file).expect("read");
        std::fs::write(&file, one.repeat(2)).expect("write");
        assert_eq!(read_inflated(&file, 8192, "test").expect("two members"), vec![b'x'; 8192]);
        let empty = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()).finish().expect("compress");
        std::fs::write(&file, empty.repeat(super::MAX_GZIP_MEMBERS + 1)).expect("write");
        assert!(matches!(read_inflated(&file, 1 << 20, "test"), Err(ReadError::Members { .. })));
        std::fs::write(&file, b"plain").expect("write");
        assert_eq!(read_inflated(&file, 5, "test").expect("plain"), b"plain");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn what_is_not_a_bounded_regular_file_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("memlab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("f");
        std::fs::write(&file, b"12345").expect("write");
        assert_eq!(read(&file, 5, "test").expect("read"), b"12345");
        assert!(matches!(read(&file, 4, "test"), Err(ReadError::TooLarge { limit: 4, .. })));
        assert!(matches!(read(&dir, 4, "test"), Err(ReadError::NotRegular { .. })));
        assert!(matches!(read(std::path::Path::new("/dev/zero"), 4, "test"), Err(ReadError::NotRegular { .. })));
        assert!(matches!(read_len(&file, 4, "test"), Err(ReadError::Length { expected: 4, found: 5, .. })));
        assert_eq!(read_prefix(&file, 3, "test").expect("prefix"), b"123");
        assert!(RunPath::new("f").under(&dir).is_ok());
        let _ = std::fs::remove_file(dir.join("out"));
        std::os::unix::fs::symlink("/etc", dir.join("out")).expect("link");
        for bad in ["/etc/passwd", "../f", "", "a/../../f", "out/passwd", "missing"] {
            assert!(RunPath::new(bad).under(&dir).is_err(), "{bad}");
        }
        assert_eq!(link("profiles/a.svg"), Some("profiles/a.svg"));
        for bad in ["javascript:alert(1)", "/etc/passwd", "../x", "a b", "http://x"] {
            assert_eq!(link(bad), None, "{bad}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
