//! The native entry: a crate built for the host (`memlab --build
//! --native`) exports one C-ABI table, so memlab can load it as a shared
//! library and drive it through the same seam and checks as a bundled
//! twin. Rust types never cross: every argument is bytes (the WIT's
//! `packed` wire form, or the small encodings below), so a plugin built by
//! another rustc, or written in C, speaks the same table.
//!
//! Both halves live here, so they cannot drift: `entry.rs` is the
//! plugin's side (what `export!` emits with the `native-entry` feature),
//! `client.rs` the host's, built only with the `host` feature (memlab
//! turns it on): a plugin author's crate compiles none of it.

#[cfg(feature = "host")]
mod client;
pub(crate) mod entry;

#[cfg(feature = "host")]
pub use client::{Called, Remote, SharedRemote};
pub use entry::{Answer, Hosted, Input, Made, SharedHosted, shared_table, table};

use std::ffi::c_void;

use crate::commitlog::twin::Replayed;
use crate::{Description, Error, Finished, Packed, SegmentMeta, Stats, Tail};

/// Bumped whenever the table, an op or an encoding changes. 2 numbers the
/// operations by the contract's one table (`Op::code`), and `create`
/// takes the operation that creates (`reader.open` for a reader); 3 adds
/// the table's `flags`.
pub const ABI_VERSION: u32 = 3;
/// The symbol a native plugin exports: `extern "C" fn() -> *const NativeTable`.
pub const ENTRY_SYMBOL: &[u8] = b"memlab_native_entry_v3";
/// A table's flag: its instances take calls from many threads at once (a
/// concurrent strategy), so the host may call them without a lock.
pub const CONCURRENT: u32 = 1;
/// The SDK version a plugin was built with; the host refuses another.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Borrowed bytes; `ptr` may be null only when `len` is 0.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Slice {
    /// The first byte.
    pub ptr: *const u8,
    /// How many bytes.
    pub len: usize,
}

impl Slice {
    /// Lends `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Slice { ptr: bytes.as_ptr(), len: bytes.len() }
    }

    /// No bytes at all (an absent scan end).
    pub const NONE: Slice = Slice { ptr: std::ptr::null(), len: 0 };

    /// The bytes, or `None` for [`Slice::NONE`].
    ///
    /// # Safety
    /// `ptr` must point at `len` readable bytes that outlive `'a`.
    pub unsafe fn get<'a>(self) -> Option<&'a [u8]> {
        // SAFETY: the caller vouches for ptr/len; a null pointer is `None`.
        (!self.ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }
}

/// The host's memory pool, lent to one `store` call.
#[repr(C)]
pub struct PoolTable {
    /// The host's pool; opaque to the plugin.
    pub ctx: *mut c_void,
    /// Reserves bytes: a status.
    pub reserve: unsafe extern "C" fn(ctx: *mut c_void, bytes: u64) -> u32,
    /// Reserves each of `len` sizes: a status.
    pub reserve_each: unsafe extern "C" fn(ctx: *mut c_void, sizes: *const u64, len: usize) -> u32,
    /// Gives bytes back.
    pub release: unsafe extern "C" fn(ctx: *mut c_void, bytes: u64),
}

/// Creates an instance: the creating operation's code (`Op::code`: the
/// kind's `create`, or `reader.open`), parameters (packed `k, v, ...`),
/// two inputs of that operation, where to put the instance, and where to
/// put an error's message. Returns a status.
pub type CreateFn = unsafe extern "C" fn(op: u32, params: Slice, a: Slice, b: Slice, instance: *mut *mut c_void, out: *mut Slice) -> u32;
/// Calls an operation (`Op::code`) on an instance; its output (or an
/// error's message) stays valid in `out` until the thread's next call
/// into the table (the plugin keeps one answer buffer a thread). Returns
/// a status.
pub type CallFn = unsafe extern "C" fn(instance: *mut c_void, op: u32, a: Slice, b: Slice, n: u64, pool: *const PoolTable, out: *mut Slice) -> u32;
/// Frees an instance.
pub type DropFn = unsafe extern "C" fn(instance: *mut c_void);

/// What a native plugin exports.
#[repr(C)]
pub struct NativeTable {
    /// [`ABI_VERSION`] as the plugin was built.
    pub abi: u32,
    /// Its kind, as `Kind as u32`.
    pub kind: u32,
    /// [`CONCURRENT`], or 0.
    pub flags: u32,
    /// [`SDK_VERSION`] as the plugin was built.
    pub sdk: Slice,
    /// The strategy's name.
    pub name: Slice,
    /// The strategy's version.
    pub version: Slice,
    /// See [`CreateFn`].
    pub create: CreateFn,
    /// See [`CallFn`].
    pub call: CallFn,
    /// See [`DropFn`].
    pub drop: DropFn,
}

// SAFETY: the table is immutable and its slices point at 'static strings.
unsafe impl Sync for NativeTable {}

/// Statuses: 0 is success, then one per `Error` variant, then a panic
/// (the instance is poisoned from then on).
pub mod status {
    /// Success.
    pub const OK: u32 = 0;
    /// `Error::BadParam`.
    pub const BAD_PARAM: u32 = 1;
    /// `Error::PoolFull`.
    pub const POOL_FULL: u32 = 2;
    /// `Error::Corrupt`.
    pub const CORRUPT: u32 = 3;
    /// `Error::InvalidState`.
    pub const INVALID_STATE: u32 = 4;
    /// `Error::Other`.
    pub const OTHER: u32 = 5;
    /// The plugin panicked; the message is the panic's.
    pub const PANICKED: u32 = 6;
}

/// Each operation's inputs are `a`, `b` and `n`, its output bytes:
/// - `describe`: packed `name, version, k, v, ...`; `stats`: packed
///   `name, u64 LE, ...`;
/// - `memtable.insert` packed entries `a`; `memtable.get`, `reader.get`:
///   one record per key of packed `a`; `memtable.scan`: `a <= key < b`
///   (`b` absent: no end), at most `n`; `cursor.next`, `reader.next`: up
///   to `n` bytes;
/// - `allocator.store-rows`: packed rows `a`, refs as u64 LE;
///   `allocator.load`: the rows behind refs `a` (u64 LE);
/// - `writer.write`: the bytes of packed flush records `a`;
///   `writer.finish`: packed `tail, index, rows, partitions, tombstones,
///   min-timestamp, max-timestamp, min-clustering, max-clustering,
///   checksum`;
/// - `commitlog.encode`: the record of packed rows `a`;
///   `commitlog.replay`: segment `a`, at most `n` rows, as packed
///   `intact, tail, rows`.
pub use crate::contract::Op;

/// An error as a status and its message.
pub fn error_status(error: &Error) -> (u32, &str) {
    match error {
        Error::BadParam(m) => (status::BAD_PARAM, m),
        Error::PoolFull => (status::POOL_FULL, ""),
        Error::Corrupt(m) => (status::CORRUPT, m),
        Error::InvalidState(m) => (status::INVALID_STATE, m),
        Error::Other(m) => (status::OTHER, m),
    }
}

/// A status and its message as an error (`None` for `OK` and `PANICKED`).
pub fn status_error(status: u32, message: String) -> Option<Error> {
    Some(match status {
        status::BAD_PARAM => Error::BadParam(message),
        status::POOL_FULL => Error::PoolFull,
        status::CORRUPT => Error::Corrupt(message),
        status::INVALID_STATE => Error::InvalidState(message),
        status::OK | status::PANICKED => return None,
        other => Error::Other(format!("unknown status {other}: {message}")),
    })
}

/// Parameters as pairs.
pub type Pairs = Vec<(String, String)>;

/// Pairs as packed `k, v, ...`.
pub fn encode_pairs<'a>(first: impl IntoIterator<Item = &'a [u8]>, pairs: &[(String, String)]) -> Vec<u8> {
    let mut p = Packed::new();
    for f in first {
        p.push(f);
    }
    for (k, v) in pairs {
        p.push(k.as_bytes());
        p.push(v.as_bytes());
    }
    p.into_wire()
}

fn text(bytes: &[u8], what: &str) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec()).map_err(|_| Error::Corrupt(format!("{what} is not UTF-8")))
}

fn u64_of(bytes: &[u8], what: &str) -> Result<u64, Error> {
    bytes.try_into().map(u64::from_le_bytes).map_err(|_| Error::Corrupt(format!("{what} is {} bytes, not 8", bytes.len())))
}

/// Decodes packed `k, v, ...` after `skip` leading records.
pub fn decode_pairs(wire: &[u8], skip: usize) -> Result<(Vec<String>, Pairs), Error> {
    let p = Packed::from_wire(wire.to_vec())?;
    if p.len() < skip || !(p.len() - skip).is_multiple_of(2) {
        return Err(Error::Corrupt(format!("{} records are not {skip} then pairs", p.len())));
    }
    let head = p.iter().take(skip).map(|r| text(r, "a name")).collect::<Result<_, _>>()?;
    let rest: Vec<&[u8]> = p.iter().skip(skip).collect();
    let pairs = rest.chunks_exact(2).map(|kv| Ok((text(kv[0], "a key")?, text(kv[1], "a value")?))).collect::<Result<_, Error>>()?;
    Ok((head, pairs))
}

/// A description's bytes.
pub fn encode_description(d: &Description) -> Vec<u8> {
    encode_pairs([d.name.as_bytes(), d.version.as_bytes()], &d.params)
}

/// A description from its bytes.
pub fn decode_description(wire: &[u8]) -> Result<Description, Error> {
    let (head, params) = decode_pairs(wire, 2)?;
    let [name, version] = <[String; 2]>::try_from(head).map_err(|_| Error::Corrupt("a description without its name".into()))?;
    Ok(Description { name, version, params })
}

/// Counters' bytes.
pub fn encode_stats(stats: &Stats) -> Vec<u8> {
    let mut p = Packed::with_capacity(stats.len() * 2, stats.len() * 24);
    for (name, value) in stats {
        p.push(name.as_bytes());
        p.push(&value.to_le_bytes());
    }
    p.into_wire()
}

/// Counters from their bytes.
pub fn decode_stats(wire: &[u8]) -> Result<Stats, Error> {
    let p = Packed::from_wire(wire.to_vec())?;
    let records: Vec<&[u8]> = p.iter().collect();
    if !records.len().is_multiple_of(2) {
        return Err(Error::Corrupt("counters without their values".into()));
    }
    records.chunks_exact(2).map(|nv| Ok((text(nv[0], "a counter's name")?, u64_of(nv[1], "a counter")?))).collect()
}

/// A finished segment's bytes.
pub fn encode_finished(tail: &[u8], f: &Finished) -> Vec<u8> {
    let m = &f.meta;
    let mut p = Packed::new();
    p.push(tail);
    p.push(&f.index);
    for v in [m.rows, m.partitions, m.tombstones, m.min_timestamp, m.max_timestamp] {
        p.push(&v.to_le_bytes());
    }
    p.push(&m.min_clustering);
    p.push(&m.max_clustering);
    p.push(&m.checksum.to_le_bytes());
    p.into_wire()
}

/// A finished segment (its tail and what `finish` returned) from its bytes.
pub fn decode_finished(wire: Vec<u8>) -> Result<(Vec<u8>, Finished), Error> {
    let p = Packed::from_wire(wire)?;
    let r: Vec<&[u8]> = p.iter().collect();
    let [tail, index, rows, partitions, tombstones, min_ts, max_ts, min_c, max_c, checksum] = r[..] else {
        return Err(Error::Corrupt(format!("a finished segment in {} records, not 10", r.len())));
    };
    let meta = SegmentMeta {
        rows: u64_of(rows, "rows")?,
        partitions: u64_of(partitions, "partitions")?,
        tombstones: u64_of(tombstones, "tombstones")?,
        min_timestamp: u64_of(min_ts, "min-timestamp")?,
        max_timestamp: u64_of(max_ts, "max-timestamp")?,
        min_clustering: min_c.to_vec(),
        max_clustering: max_c.to_vec(),
        checksum: u64_of(checksum, "checksum")?,
    };
    Ok((tail.to_vec(), Finished { index: index.to_vec(), meta }))
}

/// Refs as u64 LE bytes.
pub fn encode_refs(refs: &[u64]) -> Vec<u8> {
    refs.iter().flat_map(|r| r.to_le_bytes()).collect()
}

/// Refs from u64 LE bytes.
pub fn decode_refs(bytes: &[u8]) -> Result<Vec<u64>, Error> {
    if !bytes.len().is_multiple_of(8) {
        return Err(Error::Corrupt(format!("{} bytes of refs", bytes.len())));
    }
    Ok(bytes.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect())
}

/// A replay's bytes: packed `intact, tail, rows`.
pub fn encode_replayed(r: Replayed) -> Vec<u8> {
    let tail = match r.tail {
        Tail::Clean => 0u8,
        Tail::Torn => 1,
        Tail::Damaged => 2,
    };
    let mut p = Packed::new();
    p.push(&r.intact.to_le_bytes());
    p.push(&[tail]);
    p.push(&r.rows.into_wire());
    p.into_wire()
}

/// A replay from its bytes.
pub fn decode_replayed(wire: &[u8]) -> Result<Replayed, Error> {
    let p = Packed::from_wire(wire.to_vec())?;
    let r: Vec<&[u8]> = p.iter().collect();
    let [intact, tail, rows] = r[..] else {
        return Err(Error::Corrupt(format!("a replay in {} records, not 3", r.len())));
    };
    let tail = match tail {
        [0] => Tail::Clean,
        [1] => Tail::Torn,
        [2] => Tail::Damaged,
        _ => return Err(Error::Corrupt("a replay's tail is not 0, 1 or 2".into())),
    };
    Ok(Replayed { intact: u64_of(intact, "intact")?, tail, rows: Packed::from_wire(rows.to_vec())? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encodings_round_trip() {
        let d = Description { name: "t".into(), version: "1".into(), params: vec![("a".into(), "1".into())] };
        assert_eq!(decode_description(&encode_description(&d)).ok(), Some(d));
        let s: Stats = vec![("entries".into(), 7), ("index-bytes".into(), u64::MAX)];
        assert_eq!(decode_stats(&encode_stats(&s)).ok(), Some(s));
        let f = Finished { index: vec![1, 2], meta: SegmentMeta { rows: 3, min_clustering: vec![9], checksum: 5, ..SegmentMeta::default() } };
        assert_eq!(decode_finished(encode_finished(b"tail", &f)).ok(), Some((b"tail".to_vec(), f)));
        assert_eq!(decode_refs(&encode_refs(&[1, u64::MAX])).ok(), Some(vec![1, u64::MAX]));
        assert!(decode_refs(&[0; 7]).is_err());
        let mut rows = Packed::new();
        rows.push(b"row");
        let back = decode_replayed(&encode_replayed(Replayed { rows: rows.clone(), intact: 12, tail: Tail::Torn })).ok();
        assert_eq!(back.map(|r| (r.rows, r.intact, r.tail)), Some((rows, 12, Tail::Torn)));
    }
}
