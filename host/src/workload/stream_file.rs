//! Stream files: a generated stream, frozen. `memlab stream` writes one;
//! a profile with `stream = "file"` replays it, so a stream can be kept,
//! shared and rerun byte for byte.
//!
//! Layout (little-endian): `MLSTRM01`, version u32, profile-json-len u32,
//! the profile as JSON, threads u32, an op count u64 per thread, then each
//! thread's ops in order: kind u8, then for an insert rows u32 and per row
//! len u32 + bytes; for a read pk-len u32, pk, ck-len u32, ck; for a scan
//! pk-len u32, pk, limit u32. Trailer: fingerprint u64, crc32 u32 over all
//! before it.

use std::path::{Path, PathBuf};

use memlab_sdk::RowView;

use super::{Fingerprint, Generator, Op, OpKind, Profile};

const MAGIC: &[u8; 8] = b"MLSTRM01";
const VERSION: u32 = 1;
const TRAILER: usize = 12;

/// A stream file that cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum StreamFileError {
    #[error("{path}: {source}")]
    /// The file could not be read or written.
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    #[error("{path}: byte {offset}: {what}")]
    /// The file is damaged.
    Corrupt {
        /// The file.
        path: String,
        /// Where in the file.
        offset: usize,
        /// What is wrong.
        what: String,
    },
    #[error("{path}: {what}")]
    /// The file cannot be replayed.
    Unusable {
        /// The file.
        path: String,
        /// What is wrong.
        what: String,
    },
}

/// A replayable stream, held in memory.
#[derive(Debug)]
pub struct StreamFile {
    path: PathBuf,
    data: Vec<u8>,
    /// Start offset of every op, per thread.
    ops: Vec<Vec<usize>>,
    profile: Profile,
    fingerprint: Fingerprint,
    /// Each op's shape as the generator drew it, when the stream was
    /// generated in this process (materialized); a file's ops are public
    /// content, and their shape is their bytes.
    shapes: Option<Vec<Vec<u64>>>,
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Generates `profile`'s stream into `path`; returns its fingerprint and op count.
pub fn write_stream_file(profile: &Profile, path: &Path) -> Result<(Fingerprint, u64), StreamFileError> {
    let (out, fingerprint, _) = encode_stream(profile, path)?;
    crate::util::files::write_whole(path, &out).map_err(|source| StreamFileError::Io { path: path.display().to_string(), source })?;
    Ok((fingerprint, profile.ops))
}

/// Each thread's ops' shapes, in order.
type Shapes = Vec<Vec<u64>>;

/// Generates `profile`'s stream in the stream file layout, with each op's
/// shape; `path` names it in errors.
pub(super) fn encode_stream(profile: &Profile, path: &Path) -> Result<(Vec<u8>, Fingerprint, Shapes), StreamFileError> {
    let unusable = |what: &str| StreamFileError::Unusable { path: path.display().to_string(), what: what.to_string() };
    if profile.duration.is_some() {
        return Err(unusable("a stream file needs a count (`ops`), not a `duration`"));
    }
    if profile.stream.is_some() {
        return Err(unusable("the profile already replays a stream file"));
    }
    // The frozen profile is what it generates, not how it was held.
    let json = serde_json::to_vec(&Profile { materialize: false, ..profile.clone() }).map_err(|e| unusable(&e.to_string()))?;
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    put_bytes(&mut out, &json);
    out.extend_from_slice(&(profile.threads as u32).to_le_bytes());
    for thread in 0..profile.threads {
        out.extend_from_slice(&profile.ops_for(thread).to_le_bytes());
    }
    let mut generator = Generator::new(profile);
    let mut op = Op::default();
    let (mut parts, mut shapes) = (Vec::new(), Vec::new());
    for thread in 0..profile.threads {
        let mut fingerprint = Fingerprint::default();
        let mut shape = Vec::with_capacity(profile.ops_for(thread) as usize);
        for index in 0..profile.ops_for(thread) {
            generator.op(thread, index, &mut op);
            fingerprint.add(&op);
            shape.push(op.shape);
            out.push(op.kind as u8);
            match op.kind {
                OpKind::Insert => {
                    out.extend_from_slice(&(op.rows.len() as u32).to_le_bytes());
                    op.rows.iter().for_each(|row| put_bytes(&mut out, row));
                }
                OpKind::Read => {
                    put_bytes(&mut out, &op.partition);
                    put_bytes(&mut out, &op.clustering);
                }
                OpKind::Scan => {
                    put_bytes(&mut out, &op.partition);
                    out.extend_from_slice(&op.limit.to_le_bytes());
                }
            }
        }
        parts.push(fingerprint);
        shapes.push(shape);
    }
    let fingerprint = Fingerprint::combine(&parts);
    out.extend_from_slice(&fingerprint.0.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
    Ok((out, fingerprint, shapes))
}

/// A bounds-checked cursor that names the byte it failed at.
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn fail(&self, what: impl Into<String>) -> StreamFileError {
        StreamFileError::Corrupt { path: self.path.display().to_string(), offset: self.at, what: what.into() }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], StreamFileError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| self.fail(format!("{what} of {n} bytes runs past the end")))?;
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn u32(&mut self, what: &str) -> Result<u32, StreamFileError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, StreamFileError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(a))
    }

    fn bytes(&mut self, what: &str) -> Result<&'a [u8], StreamFileError> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
}

/// The largest stream file memlab reads (it is held in memory whole).
pub const MAX_STREAM_BYTES: u64 = 4 << 30;

impl StreamFile {
    /// Reads and checks a whole stream file, of at most `MAX_STREAM_BYTES`.
    pub fn read(path: &Path) -> Result<StreamFile, StreamFileError> {
        let data = crate::input::read(path, MAX_STREAM_BYTES, "stream file").map_err(|e| match e {
            crate::input::ReadError::Io { source, .. } => StreamFileError::Io { path: path.display().to_string(), source },
            other => StreamFileError::Io { path: path.display().to_string(), source: std::io::Error::other(other.to_string()) },
        })?;
        StreamFile::parse(path, data)
    }

    /// Checks and indexes stream file bytes; `path` names them in errors.
    pub fn parse(path: &Path, data: Vec<u8>) -> Result<StreamFile, StreamFileError> {
        let mut c = Cursor { data: &data, at: 0, path };
        if data.len() < MAGIC.len() + TRAILER || c.take(8, "magic")? != MAGIC {
            return Err(c.fail("not a memlab stream file (no MLSTRM01 magic)"));
        }
        let body = data.len() - TRAILER;
        let stored = u32::from_le_bytes([data[body + 8], data[body + 9], data[body + 10], data[body + 11]]);
        let crc = crc32fast::hash(&data[..body + 8]);
        if crc != stored {
            return Err(StreamFileError::Corrupt {
                path: path.display().to_string(),
                offset: body + 8,
                what: format!("crc32 {crc:#010x} != stored {stored:#010x}"),
            });
        }
        let version = c.u32("version")?;
        if version != VERSION {
            return Err(c.fail(format!("version {version}; this memlab reads version {VERSION}")));
        }
        let json = c.bytes("profile")?;
        let profile: Profile = serde_json::from_slice(json).map_err(|e| c.fail(format!("profile: {e}")))?;
        let threads = c.u32("threads")? as usize;
        if threads == 0 || threads > 1024 {
            return Err(c.fail(format!("{threads} threads")));
        }
        let counts = (0..threads).map(|_| c.u64("op count")).collect::<Result<Vec<_>, _>>()?;
        let mut ops = Vec::with_capacity(threads);
        for count in counts {
            let mut starts = Vec::with_capacity((count as usize).min(body / 2));
            for _ in 0..count {
                starts.push(c.at);
                Self::skip_op(&mut c)?;
                if c.at > body {
                    return Err(c.fail("ops run into the trailer"));
                }
            }
            ops.push(starts);
        }
        if c.at != body {
            return Err(c.fail(format!("{} bytes after the last op", body - c.at)));
        }
        let fingerprint = Fingerprint(u64::from_le_bytes(data[body..body + 8].try_into().unwrap_or_default()));
        Ok(StreamFile { path: path.to_path_buf(), data, ops, profile, fingerprint, shapes: None })
    }

    fn skip_op(c: &mut Cursor<'_>) -> Result<(), StreamFileError> {
        match c.take(1, "op kind")?[0] {
            0 => {
                for _ in 0..c.u32("row count")? {
                    let at = c.at;
                    let row = c.bytes("row")?;
                    RowView::decode(row).map_err(|e| StreamFileError::Corrupt { path: c.path.display().to_string(), offset: at, what: e.to_string() })?;
                }
            }
            1 => {
                c.bytes("partition key")?;
                c.bytes("clustering key")?;
            }
            2 => {
                c.bytes("partition key")?;
                c.u32("scan limit")?;
            }
            kind => return Err(c.fail(format!("unknown op kind {kind}"))),
        }
        Ok(())
    }

    /// Fills `op` with op `index` of `thread`; false past its last op.
    pub fn op(&self, thread: usize, index: u64, op: &mut Op) -> bool {
        let Some(&start) = self.ops.get(thread).and_then(|t| t.get(index as usize)) else { return false };
        // Checked in `parse`: decoding again cannot fail.
        let mut c = Cursor { data: &self.data, at: start, path: &self.path };
        op.rows.clear();
        op.partition.clear();
        op.clustering.clear();
        op.limit = 0;
        let kind = c.take(1, "op kind").map(|k| k[0]).unwrap_or(u8::MAX);
        op.kind = match kind {
            0 => OpKind::Insert,
            1 => OpKind::Read,
            _ => OpKind::Scan,
        };
        let _ = (|| -> Result<(), StreamFileError> {
            match op.kind {
                OpKind::Insert => {
                    for _ in 0..c.u32("row count")? {
                        op.rows.push(c.bytes("row")?);
                    }
                    // The keys are enough: `parse` validated every row.
                    if let Some(head) = op.rows.get(0).and_then(|r| RowView::head(r).ok()) {
                        op.partition.extend_from_slice(head.partition);
                    }
                }
                OpKind::Read => {
                    op.partition.extend_from_slice(c.bytes("partition key")?);
                    op.clustering.extend_from_slice(c.bytes("clustering key")?);
                }
                OpKind::Scan => {
                    op.partition.extend_from_slice(c.bytes("partition key")?);
                    op.limit = c.u32("scan limit")?;
                }
            }
            Ok(())
        })();
        op.shape = match self.shapes.as_ref().and_then(|s| s.get(thread)?.get(index as usize)) {
            Some(&shape) => shape,
            None => {
                let mut print = Fingerprint::default();
                print.add(op);
                print.0
            }
        };
        true
    }

    /// `profile`'s stream generated into memory (salted as the profile
    /// is), its ops keeping the shapes the generator drew.
    pub(super) fn materialized(profile: &Profile) -> Result<StreamFile, StreamFileError> {
        let name = Path::new("(materialized stream)");
        let (bytes, _, shapes) = encode_stream(profile, name)?;
        Ok(StreamFile { shapes: Some(shapes), ..StreamFile::parse(name, bytes)? })
    }

    /// Client threads the stream was made for.
    pub fn threads(&self) -> usize {
        self.ops.len()
    }

    /// Ops of `thread`.
    pub fn ops_for(&self, thread: usize) -> u64 {
        self.ops.get(thread).map_or(0, |t| t.len() as u64)
    }

    /// The profile that generated it.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The fingerprint recorded when it was written.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Where it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
