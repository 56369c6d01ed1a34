//! Segment files: `<name>.data`, `<name>.index` and `<name>.meta` (JSON).
//! The serializer decides the data and index bytes; the host adds the
//! metadata file with its own CRC32 of each, so damage is caught even when
//! a serializer checks nothing.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use memlab_sdk::{Description, SegmentMeta};
use serde::{Deserialize, Serialize};

/// Problems with segment files; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    #[error("{path}: {source}")]
    /// The file could not be read or written.
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    #[error("{path}: unreadable segment metadata: {detail}")]
    /// The metadata file is malformed.
    Meta {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    #[error("{path}: {what} is damaged: CRC32 {found:08x}, expected {expected:08x}")]
    /// A checksum does not match.
    Checksum {
        /// The file.
        path: String,
        /// Which part (data or index).
        what: &'static str,
        /// What was expected.
        expected: u32,
        /// What was found.
        found: u32,
    },
    #[error("{path}: {what} is {found} bytes, expected {expected}")]
    /// A file is not the length its metadata says.
    Length {
        /// The file.
        path: String,
        /// Which part (data or index).
        what: &'static str,
        /// What was expected.
        expected: u64,
        /// What was found.
        found: u64,
    },
    /// Not a regular file, or larger than its kind may be.
    #[error("{0}")]
    Refused(crate::input::ReadError),
}

/// The largest segment metadata file memlab reads.
const MAX_META_BYTES: u64 = 1 << 20;

fn refused(e: crate::input::ReadError) -> SegmentError {
    match e {
        crate::input::ReadError::Io { path, source } => SegmentError::Io { path, source },
        crate::input::ReadError::Length { path, what, expected, found } => SegmentError::Length { path, what, expected, found },
        other => SegmentError::Refused(other),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SegmentError + '_ {
    move |source| SegmentError::Io { path: path.display().to_string(), source }
}

/// The metadata file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetaFile {
    /// Format version of this file.
    pub format: u32,
    /// Memtable generation flushed.
    pub generation: u64,
    /// Part of the generation (one per flush writer).
    pub part: usize,
    /// The serializer that wrote it.
    pub serializer: String,
    /// Its version.
    pub serializer_version: String,
    /// Its parameters as applied.
    pub serializer_params: Vec<(String, String)>,
    /// Rows written.
    pub rows: u64,
    /// Partitions written.
    pub partitions: u64,
    /// Row tombstones written.
    pub tombstones: u64,
    /// Timestamp range.
    pub min_timestamp: u64,
    /// Timestamp range.
    pub max_timestamp: u64,
    /// Clustering range, hex.
    pub min_clustering: String,
    /// Clustering range, hex.
    pub max_clustering: String,
    /// The serializer's own checksum.
    pub serializer_checksum: u64,
    /// Data file length.
    pub data_bytes: u64,
    /// CRC32 of the data file.
    pub data_crc32: u32,
    /// Index file length.
    pub index_bytes: u64,
    /// CRC32 of the index file.
    pub index_crc32: u32,
}

const FORMAT: u32 = 2;

/// The metadata file ends with this line and the CRC32 of all before it.
const META_TRAILER: &str = "\ncrc32 ";

/// Streams one segment's data file to disk.
pub struct SegmentWriter {
    base: PathBuf,
    data_path: PathBuf,
    data: BufWriter<File>,
    crc: crc32fast::Hasher,
    bytes: u64,
}

impl std::fmt::Debug for SegmentWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentWriter").field("data", &self.data_path).field("bytes", &self.bytes).finish()
    }
}

/// Where a finished segment lives.
#[derive(Debug, Clone)]
pub struct SegmentFiles {
    /// The data file.
    pub data: PathBuf,
    /// The metadata file.
    pub meta: PathBuf,
    /// Bytes of data, index and metadata.
    pub bytes: u64,
}

impl SegmentWriter {
    /// Creates `seg-<generation>-<part>.data` in `dir`.
    pub fn create(dir: &Path, generation: u64, part: usize) -> Result<Self, SegmentError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let base = dir.join(format!("seg-{generation:05}-{part:02}"));
        let data_path = base.with_extension("data");
        let file = crate::util::files::create_new(&data_path, 0).map_err(io(&data_path))?;
        Ok(SegmentWriter { base, data_path, data: BufWriter::with_capacity(1 << 20, file), crc: crc32fast::Hasher::new(), bytes: 0 })
    }

    /// Appends serializer output.
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), SegmentError> {
        self.crc.update(bytes);
        self.bytes += bytes.len() as u64;
        self.data.write_all(bytes).map_err(io(&self.data_path))
    }

    /// Writes the index and metadata files and fsyncs all three.
    pub fn finish(self, generation: u64, part: usize, index: &[u8], meta: &SegmentMeta, serializer: &Description) -> Result<SegmentFiles, SegmentError> {
        let file = self.data.into_inner().map_err(|e| SegmentError::Io { path: self.data_path.display().to_string(), source: e.into_error() })?;
        file.sync_all().map_err(io(&self.data_path))?;
        let index_path = self.base.with_extension("index");
        write_synced(&index_path, index)?;
        let meta_file = MetaFile {
            format: FORMAT,
            generation,
            part,
            serializer: serializer.name.clone(),
            serializer_version: serializer.version.clone(),
            serializer_params: serializer.params.clone(),
            rows: meta.rows,
            partitions: meta.partitions,
            tombstones: meta.tombstones,
            min_timestamp: meta.min_timestamp,
            max_timestamp: meta.max_timestamp,
            min_clustering: hex::encode(&meta.min_clustering),
            max_clustering: hex::encode(&meta.max_clustering),
            serializer_checksum: meta.checksum,
            data_bytes: self.bytes,
            data_crc32: self.crc.finalize(),
            index_bytes: index.len() as u64,
            index_crc32: crc32fast::hash(index),
        };
        let meta_path = self.base.with_extension("meta");
        let mut json =
            serde_json::to_vec_pretty(&meta_file).map_err(|e| SegmentError::Meta { path: meta_path.display().to_string(), detail: e.to_string() })?;
        let crc = crc32fast::hash(&json);
        json.extend_from_slice(format!("{META_TRAILER}{crc:08x}\n").as_bytes());
        write_synced(&meta_path, &json)?;
        Ok(SegmentFiles { data: self.data_path, meta: meta_path, bytes: self.bytes + index.len() as u64 + json.len() as u64 })
    }
}

impl SegmentWriter {
    /// Removes the data file of a segment that received no rows.
    pub fn discard(self) {
        drop(self.data);
        let _ = std::fs::remove_file(&self.data_path);
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), SegmentError> {
    let mut file = crate::util::files::create_new(path, 0).map_err(io(path))?;
    file.write_all(bytes).map_err(io(path))?;
    file.sync_all().map_err(io(path))
}

/// A segment read from disk, its files checked against the metadata.
#[derive(Debug)]
pub struct LoadedSegment {
    /// The metadata.
    pub meta: MetaFile,
    /// The data file.
    pub data: Vec<u8>,
    /// The index file.
    pub index: Vec<u8>,
}

/// Reads a segment by its metadata file and checks lengths and CRC32s.
pub fn load(meta_path: &Path) -> Result<LoadedSegment, SegmentError> {
    let raw = crate::input::read(meta_path, MAX_META_BYTES, "segment metadata file").map_err(refused)?;
    let meta = parse_meta(&raw).map_err(|detail| SegmentError::Meta { path: meta_path.display().to_string(), detail })?;
    let read_checked = |ext: &str, what: &'static str, len: u64, crc: u32| {
        let path = meta_path.with_extension(ext);
        // Exactly the length the metadata promises, and never more.
        let bytes = crate::input::read_len(&path, len, what).map_err(refused)?;
        let found = crc32fast::hash(&bytes);
        if found != crc {
            return Err(SegmentError::Checksum { path: path.display().to_string(), what, expected: crc, found });
        }
        Ok(bytes)
    };
    let data = read_checked("data", "data file", meta.data_bytes, meta.data_crc32)?;
    let index = read_checked("index", "index file", meta.index_bytes, meta.index_crc32)?;
    Ok(LoadedSegment { meta, data, index })
}

/// Parses a metadata file's bytes, checking its trailing CRC32 first, so
/// a flipped bit anywhere in it is caught.
pub fn parse_meta(raw: &[u8]) -> Result<MetaFile, String> {
    let text = std::str::from_utf8(raw).map_err(|e| format!("not UTF-8: {e}"))?;
    let (json, trailer) = text.rsplit_once(META_TRAILER).ok_or("no crc32 trailer")?;
    // The trailer is held to the exact text memlab writes: parsing it as
    // a number would take `B` for `b`, so a flipped case bit would pass.
    let found = crc32fast::hash(json.as_bytes());
    if trailer != format!("{found:08x}\n") {
        return Err(format!("damaged: CRC32 {found:08x}, trailer says {trailer:?}"));
    }
    let meta: MetaFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if meta.format != FORMAT {
        return Err(format!("format {} is not {FORMAT}", meta.format));
    }
    Ok(meta)
}

/// The metadata files in `dir`, in (generation, part) order.
pub fn list(dir: &Path) -> Result<Vec<PathBuf>, SegmentError> {
    let mut metas: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "meta"))
        .collect();
    metas.sort();
    Ok(metas)
}

#[cfg(test)]
mod tests {
    use super::{META_TRAILER, parse_meta};

    /// A trailer is the exact text memlab writes: a flipped case bit in
    /// one of its hex letters is damage, not the same number.
    #[test]
    fn a_meta_trailer_is_held_to_its_exact_text() {
        let json = "{}";
        let crc = crc32fast::hash(json.as_bytes());
        assert!(format!("{crc:08x}").bytes().any(|b| b.is_ascii_lowercase()), "a letter to flip the case of");
        let good = format!("{json}{META_TRAILER}{crc:08x}\n");
        let err = parse_meta(good.as_bytes()).expect_err("`{}` is no metadata");
        assert!(!err.contains("damaged"), "{err}");
        for bad in [format!("{json}{META_TRAILER}{crc:08X}\n"), format!("{json}{META_TRAILER}+{crc:07x}\n"), format!("{json}{META_TRAILER}{crc:08x}")] {
            assert!(parse_meta(bad.as_bytes()).expect_err("damage").contains("damaged"), "{bad:?}");
        }
    }
}
