//! Nothing lost: the segments read back must hold exactly the stream's
//! final state. Both sides reduce to a map from key hash to the newest
//! (timestamp, row hash), compared whole; the digest summarises it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use memlab_sdk::{FlushRecord, RowView};

use crate::router::{sort_key, token};
use crate::seam::ledger::{self, Tally};
use crate::seam::{self, SeamError};
use crate::segment::{self, LoadedSegment, SegmentError};
use crate::workload::{Op, Stream};

pub mod kept_log;
pub mod log;
mod spot;

/// Key hash → (timestamp, row hash) of the newest version.
pub type State = HashMap<u128, (u64, u128)>;

/// Opens a reader on a loaded segment.
pub type ReaderFactory<'a> = dyn Fn(&LoadedSegment) -> Result<seam::Reader, SeamError> + Send + Sync + 'a;

/// Why verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("verify: {0}")]
    /// A segment's files are damaged or unreadable.
    Segment(#[from] SegmentError),
    #[error("verify: reading {segment}: {source}")]
    /// The serializer's reader failed.
    Plugin {
        /// The segment's metadata file.
        segment: String,
        /// The underlying error.
        source: Box<SeamError>,
    },
    #[error("verify: {segment} holds a bad record: {detail}")]
    /// A record read back is malformed or out of order.
    Record {
        /// The segment's metadata file.
        segment: String,
        /// What went wrong.
        detail: String,
    },
    #[error("verify: {segment} read back {found} rows but its metadata says {expected}")]
    /// A segment holds another number of rows than its metadata.
    RowCount {
        /// The segment's metadata file.
        segment: String,
        /// Rows expected.
        expected: u64,
        /// Rows found.
        found: u64,
    },
    #[error(
        "verify: {segment} does not hold what the host handed its serializer: {handed} rows were handed over, {found} read back, and their keys, timestamps or bytes differ from the host's tally"
    )]
    /// A segment does not hold what its serializer was handed.
    Tally {
        /// The segment's metadata file.
        segment: String,
        /// Rows its serializer was handed.
        handed: u64,
        /// Rows found.
        found: u64,
    },
    #[error(
        "verify: the segments do not hold the stream's final state: {missing} keys missing, {extra} unexpected, {different} with the wrong row (expected {expected} keys, digest {expected_digest:032x}; found {found} keys, digest {found_digest:032x}){first}"
    )]
    /// The state read back is not the stream's.
    Mismatch {
        /// Keys the stream has and the segments lack.
        missing: u64,
        /// Keys the segments have and the stream lacks.
        extra: u64,
        /// Keys whose newest row differs.
        different: u64,
        /// Rows expected.
        expected: u64,
        /// Rows found.
        found: u64,
        /// The stream's digest.
        expected_digest: u128,
        /// The segments' digest.
        found_digest: u128,
        /// The first wrong key in key order, once `explain` found it.
        first: String,
    },
}

/// What verification proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// Distinct keys in the final state.
    pub keys: u64,
    /// Rows read back from segments, older versions included.
    pub rows_read: u64,
    /// Digest of the final state (FNV-1a 128 since run record schema 2).
    pub digest: u128,
}

/// A key's hash in a `State`.
pub fn key_hash(key: &[u8]) -> u128 {
    hash128(key)
}

/// FNV-1a, 128-bit: a published, fixed function, so a digest saved in
/// run.json means the same to every later build (std's `DefaultHasher`
/// may change between Rust releases).
fn hash128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |hash, &b| (hash ^ u128::from(b)).wrapping_mul(PRIME))
}

fn keep_newest(state: &mut State, key: u128, row: &RowView<'_>) {
    let value = (row.timestamp, hash128(row.as_bytes()));
    state
        .entry(key)
        .and_modify(|old| {
            if value.0 >= old.0 {
                *old = value;
            }
        })
        .or_insert(value);
}

/// An order-independent digest of a state.
pub fn digest(state: &State) -> u128 {
    state.iter().fold(0u128, |acc, (k, (ts, row))| acc.wrapping_add(hash128(&[k.to_le_bytes().as_slice(), &ts.to_le_bytes(), &row.to_le_bytes()].concat())))
}

/// The final state the first `counts[t]` ops of each thread `t` leave
/// behind, without the ops in `skip` (ops that failed and were never
/// acknowledged). Reads and scans leave nothing.
pub fn expected(stream: &Stream, counts: &[u64], skip: &HashSet<(usize, u64)>) -> State {
    let mut state = State::new();
    for_each_row(stream, counts, skip, |key, row| keep_newest(&mut state, hash128(key), row));
    state
}

/// Calls `f` with the sort key and the row of every row the first
/// `counts[t]` ops of each thread `t` wrote, leaving out the ops in `skip`.
fn for_each_row(stream: &Stream, counts: &[u64], skip: &HashSet<(usize, u64)>, mut f: impl FnMut(&[u8], &RowView<'_>)) {
    let (mut source, mut op, mut key) = (stream.ops(), Op::default(), Vec::new());
    for (thread, &count) in counts.iter().enumerate() {
        for index in 0..count {
            if skip.contains(&(thread, index)) || !source.op(thread, index, &mut op) {
                continue;
            }
            for record in op.rows.iter() {
                // The generator's own rows, and a stream file's (checked
                // when it was read), always decode.
                let Ok(row) = RowView::decode(record) else { continue };
                key.clear();
                sort_key(token(row.partition), row.partition, row.clustering, &mut key);
                f(&key, &row);
            }
        }
    }
}

/// The spot checks a read-back makes (`spot::Picks`): one key in `every`
/// read again by key, two damaged copies, and, given the serializer's
/// writer, the picked rows written again under foreign keys (`every` 0:
/// none of them).
#[derive(Clone, Copy)]
pub struct Spot<'a> {
    /// One key in this many.
    pub every: u64,
    /// The serializer's writers, for the foreign-key round trip.
    pub writer: Option<&'a crate::flush::SerializerFactory>,
}

/// What one read-back of a run's segments holds them to.
#[derive(Clone, Copy)]
pub struct ReadBack<'a> {
    /// The spot checks.
    pub spot: Spot<'a>,
    /// Keys (by the ledger's hash) to look for in one generation's
    /// segments.
    pub watch: &'a HashSet<u64>,
    /// That generation: the one the drain froze, which the read probe
    /// read live. Named, never inferred as the newest on disk: a drained
    /// generation that held nothing writes no segment, and the newest
    /// would then be the one before it, whose keys a probe rightly missed.
    pub watch_generation: Option<u64>,
    /// The host's tally of what each segment was handed, by (generation,
    /// part): each segment read back must hold exactly that, in key order.
    pub tallies: Option<&'a HashMap<(u64, usize), Tally>>,
    /// Whether to build the final state (FNV-1a 128, for the record's
    /// digest and the comparison with the stream).
    pub state: bool,
    /// Salts the secret's pick of the segment whose damaged copies are read.
    pub round: u64,
}

/// What a read-back found.
#[derive(Debug, Default)]
pub struct ReadBackFound {
    /// The final state (empty unless asked for).
    pub state: State,
    /// Rows read, older versions included.
    pub rows: u64,
    /// The watched keys the watched generation's segments hold.
    pub held: Vec<u64>,
    /// Segments read back whole.
    pub segments: u64,
    /// Of them, those held to the host's tally of what they were handed.
    pub tallied: u64,
}

/// Reads every segment in `dir` back through its serializer's reader,
/// with the spot checks of `spot`.
pub fn read_back(dir: &Path, open: &ReaderFactory<'_>, spot: Spot<'_>) -> Result<(State, u64), VerifyError> {
    let watch = HashSet::new();
    let found = read_back_all(dir, open, ReadBack { spot, watch: &watch, watch_generation: None, tallies: None, state: true, round: 0 })?;
    Ok((found.state, found.rows))
}

/// Reads every segment in `dir` back whole, each held to its tally where
/// one is given; the damaged copies are of a segment the secret picks.
pub fn read_back_all(dir: &Path, open: &ReaderFactory<'_>, how: ReadBack<'_>) -> Result<ReadBackFound, VerifyError> {
    let mut found = ReadBackFound::default();
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let metas = if dir.exists() { segment::list(dir)? } else { Vec::new() };
    let target = seam::secret_pick(metas.len(), how.round);
    let mut chosen: Option<(std::path::PathBuf, spot::Picks)> = None;
    for (i, meta_path) in metas.iter().enumerate() {
        let loaded = segment::load(meta_path)?;
        let generation = loaded.meta.generation;
        let name = meta_path.display().to_string();
        let plugin = |source| VerifyError::Plugin { segment: name.clone(), source: Box::new(source) };
        let mut reader = open(&loaded).map_err(plugin)?;
        let mut picks = spot::Picks::new(how.spot.every);
        let (mut tally, mut last, mut rows) = (Tally::default(), Vec::new(), 0u64);
        loop {
            let batch = reader.next(1 << 20).map_err(plugin)?;
            if batch.is_empty() {
                break;
            }
            for raw in batch.iter() {
                let record = FlushRecord::decode(raw).map_err(|e| VerifyError::Record { segment: name.clone(), detail: e.to_string() })?;
                if rows > 0 && record.key <= last.as_slice() {
                    return Err(VerifyError::Record {
                        segment: name.clone(),
                        detail: format!("key {} is not above the one before it", seam::show_key(record.key)),
                    });
                }
                last.clear();
                last.extend_from_slice(record.key);
                let key = ledger::hash(record.key);
                tally.add(key, record.row.timestamp, ledger::hash(record.row.as_bytes()));
                picks.see(record.key, key, raw);
                if how.watch.contains(&key) {
                    seen.push((generation, key));
                }
                if how.state {
                    keep_newest(&mut found.state, hash128(record.key), &record.row);
                }
                rows += 1;
            }
        }
        if rows != loaded.meta.rows {
            return Err(VerifyError::RowCount { segment: name, expected: loaded.meta.rows, found: rows });
        }
        if let Some(want) = how.tallies.and_then(|t| t.get(&(generation, loaded.meta.part))) {
            if *want != tally {
                return Err(VerifyError::Tally { segment: name, handed: want.rows, found: rows });
            }
            found.tallied += 1;
        }
        picks.check(&mut reader).map_err(plugin)?;
        if i == target {
            chosen = Some((meta_path.clone(), picks));
        }
        found.rows += rows;
        found.segments += 1;
    }
    if let Some((meta_path, picks)) = chosen.filter(|_| how.spot.every > 0) {
        let name = meta_path.display().to_string();
        let loaded = segment::load(&meta_path)?;
        let plugin = |source| VerifyError::Plugin { segment: name.clone(), source: Box::new(source) };
        spot::damaged_copies(&loaded, &picks, open, &name).map_err(plugin)?;
        if let Some(writer) = how.spot.writer {
            spot::foreign_keys(&loaded, &picks, writer, open).map_err(plugin)?;
        }
    }
    found.held = seen.into_iter().filter(|&(g, _)| Some(g) == how.watch_generation).map(|(_, key)| key).collect();
    Ok(found)
}

/// Compares the two states key by key.
pub fn compare(expected: &State, found: &State, rows_read: u64) -> Result<Verified, VerifyError> {
    let (mut missing, mut different) = (0u64, 0u64);
    for (key, value) in expected {
        match found.get(key) {
            None => missing += 1,
            Some(v) if v != value => different += 1,
            Some(_) => {}
        }
    }
    let extra = found.keys().filter(|k| !expected.contains_key(k)).count() as u64;
    let expected_digest = digest(expected);
    if missing + different + extra > 0 {
        return Err(VerifyError::Mismatch {
            missing,
            extra,
            different,
            expected: expected.len() as u64,
            found: found.len() as u64,
            expected_digest,
            found_digest: digest(found),
            first: String::new(),
        });
    }
    Ok(Verified { keys: expected.len() as u64, rows_read, digest: expected_digest })
}

/// The key hashes on which two states differ.
fn wrong_keys(expected: &State, found: &State) -> HashSet<u128> {
    let mut wrong: HashSet<u128> = expected.iter().filter(|(k, v)| found.get(*k) != Some(*v)).map(|(k, _)| *k).collect();
    wrong.extend(found.keys().filter(|k| !expected.contains_key(*k)));
    wrong
}

/// Names the first wrong key of a mismatch, in key order: its bytes
/// (printable, else hex) and what is wrong with it. It walks the stream and
/// the segments again, which only a failed verification pays for.
pub fn explain(stream: &Stream, counts: &[u64], skip: &HashSet<(usize, u64)>, dir: &Path, open: &ReaderFactory<'_>, expected: &State, found: &State) -> String {
    let wrong = wrong_keys(expected, found);
    let mut first: Option<Vec<u8>> = None;
    let mut consider = |key: &[u8]| {
        if wrong.contains(&hash128(key)) && first.as_deref().is_none_or(|f| key < f) {
            first = Some(key.to_vec());
        }
    };
    for_each_row(stream, counts, skip, |key, _| consider(key));
    for meta_path in segment::list(dir).unwrap_or_default() {
        let Ok(loaded) = segment::load(&meta_path) else { continue };
        let Ok(mut reader) = open(&loaded) else { continue };
        while let Ok(batch) = reader.next(1 << 20) {
            if batch.is_empty() {
                break;
            }
            batch.iter().filter_map(|r| FlushRecord::decode(r).ok()).for_each(|r| consider(r.key));
        }
    }
    let Some(key) = first else { return String::new() };
    let h = hash128(&key);
    let what = match (expected.get(&h), found.get(&h)) {
        (Some(_), None) => "missing from the segments".to_string(),
        (None, Some(_)) => "in the segments, but never written".to_string(),
        (Some(want), Some(got)) if want.0 != got.0 => format!("read back at timestamp {}, the newest write has {}", got.0, want.0),
        _ => "read back with different row bytes than the newest write".to_string(),
    };
    format!("; the first wrong key is {} ({} bytes): {what}", seam::show_key(&key), key.len())
}

/// What `recheck` found for one recorded run of a variant.
#[derive(Debug)]
pub enum Recheck {
    /// The segments still hold the recorded final state.
    Holds(Verified),
    /// The record predates the stable digest: only the checksums and the
    /// read-back were checked.
    ReadBack(u64),
    /// The run did not compare this round's final state (its record says
    /// so): the segments were read back and every checksum holds.
    NotVerified(u64),
    /// Damage, a reader's error, or a state that differs from the record.
    Broken(String),
}

/// Reads a recorded variant's kept segments back through `open` and
/// checks them against the record: every CRC32 and row count, and the
/// digest of the state they hold against the one verified at run time;
/// one partition in `spot_every` spot-checked by key.
pub fn recheck(dir: &Path, recorded: Option<&Verified>, schema: u32, spot_every: u64, open: &ReaderFactory<'_>) -> Recheck {
    let (found, rows) = match read_back(dir, open, Spot { every: spot_every, writer: None }) {
        Ok(read) => read,
        Err(e) => return Recheck::Broken(e.to_string()),
    };
    // A round the run did not verify has nothing to hold it to but its
    // checksums and row counts, which the read-back just checked.
    let Some(recorded) = recorded else { return Recheck::NotVerified(rows) };
    // Whatever the schema, the counts it recorded must be what the
    // segments hold: segments swapped in from another run differ there.
    if found.len() as u64 != recorded.keys || rows != recorded.rows_read {
        return Recheck::Broken(format!(
            "the segments now hold {} keys in {rows} rows; the run verified {} keys in {} rows",
            found.len(),
            recorded.keys,
            recorded.rows_read
        ));
    }
    if schema < 2 {
        return Recheck::ReadBack(rows);
    }
    let now = Verified { keys: found.len() as u64, rows_read: rows, digest: digest(&found) };
    if now.keys != recorded.keys || now.digest != recorded.digest {
        return Recheck::Broken(format!(
            "the segments now hold {} keys, digest {:032x}; the run verified {} keys, digest {:032x}",
            now.keys, now.digest, recorded.keys, recorded.digest
        ));
    }
    Recheck::Holds(now)
}

#[cfg(test)]
mod tests {
    use super::hash128;

    #[test]
    fn the_digest_hash_is_fnv1a_128() {
        // Published FNV-1a 128 test vectors: "" and "a".
        assert_eq!(hash128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(hash128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }
}
