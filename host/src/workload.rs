//! The deterministic write stream. Every op is a pure function of
//! (profile, seed, thread, op index), so every variant sees the same bytes
//! whatever the thread schedule; the fingerprint proves it.

use memlab_sdk::{Cell, Packed, encode_row};
use serde::{Deserialize, Serialize};

/// A uniform size range, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Size {
    /// Smallest size in bytes.
    pub min: u32,
    /// Largest size in bytes.
    pub max: u32,
}

impl Size {
    const fn fixed(n: u32) -> Self {
        Size { min: n, max: n }
    }

    fn sample(&self, rng: &mut SplitMix) -> usize {
        if self.max <= self.min {
            return self.min as usize;
        }
        (self.min + (rng.next_u64() % u64::from(self.max - self.min + 1)) as u32) as usize
    }
}

/// A write workload, modelled on the cassandra-stress user profile of
/// CASSANDRA-20226: one text partition key, one text clustering key, text
/// value columns, rows written in single-partition batches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Profile {
    /// The stream's seed.
    pub seed: u64,
    /// Client batches (ops) in all, split evenly over threads.
    pub ops: u64,
    /// Writer threads.
    pub threads: usize,
    /// Distinct partitions, drawn uniformly.
    pub partitions: u64,
    /// Rows per batch, all in one partition (clustering 0..n).
    pub rows_per_batch: u32,
    /// Partition key length.
    pub partition_key: Size,
    /// Clustering key length.
    pub clustering_key: Size,
    /// Value columns per row.
    pub columns: u16,
    /// Length of each value.
    pub value: Size,
    /// Share of rows written as row tombstones, 0 to 1.
    pub tombstone_ratio: f64,
    /// Point reads from the live memtables after the writes (0: none).
    pub read_probe: u64,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            seed: 20226,
            ops: 100_000,
            threads: 2,
            partitions: 1_000_000,
            rows_per_batch: 10,
            partition_key: Size::fixed(10),
            clustering_key: Size { min: 8, max: 16 },
            columns: 5,
            value: Size { min: 4, max: 16 },
            tombstone_ratio: 0.0,
            read_probe: 10_000,
        }
    }
}

/// A profile that cannot generate a stream.
#[derive(Debug, thiserror::Error)]
#[error("workload: `{key}` {problem}")]
pub struct ProfileError {
    /// The offending key.
    pub key: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl Profile {
    /// Checks the values serde cannot.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |key, problem: &str| Err(ProfileError { key, problem: problem.to_string() });
        if self.threads == 0 {
            return bad("threads", "must be at least 1");
        }
        if self.partitions == 0 {
            return bad("partitions", "must be at least 1");
        }
        if self.rows_per_batch == 0 {
            return bad("rows_per_batch", "must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.tombstone_ratio) {
            return bad("tombstone_ratio", "must be between 0 and 1");
        }
        for (key, size) in [("partition_key", self.partition_key), ("clustering_key", self.clustering_key), ("value", self.value)] {
            if size.min > size.max {
                return bad(key, "has min above max");
            }
            if size.max > 16 << 20 {
                return bad(key, "is above 16 MiB");
            }
        }
        Ok(())
    }

    /// Ops thread `thread` writes.
    pub fn ops_for(&self, thread: usize) -> u64 {
        let threads = self.threads as u64;
        self.ops / threads + u64::from((thread as u64) < self.ops % threads)
    }

    /// Rows in the whole stream.
    pub fn total_rows(&self) -> u64 {
        self.ops * u64::from(self.rows_per_batch)
    }
}

/// SplitMix64: tiny, fast, and good enough for workload bytes.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// Seeded from any number of words.
    pub fn new(words: &[u64]) -> Self {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for &w in words {
            state = mix(state ^ w);
        }
        SplitMix(state)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A uniform number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const ALPHABET: &[u8; 64] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

fn text(rng: &mut SplitMix, len: usize, out: &mut Vec<u8>) {
    out.clear();
    while out.len() < len {
        let mut bits = rng.next_u64();
        for _ in 0..10.min(len - out.len()) {
            out.push(ALPHABET[(bits & 63) as usize]);
            bits >>= 6;
        }
    }
}

/// Generates ops into reusable buffers.
#[derive(Debug)]
pub struct Generator {
    profile: Profile,
    partition: Vec<u8>,
    clustering: Vec<u8>,
    values: Vec<Vec<u8>>,
}

/// What a thread's ops fold into: the stream's fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// Folds one op's encoded rows in.
    pub fn add(&mut self, rows: &Packed) {
        let mut h = self.0 ^ 0x5155_4943_4b46_5052;
        for record in rows.iter() {
            h = fnv(h, record);
        }
        self.0 = mix(h);
    }

    /// Combines per-thread fingerprints in thread order.
    pub fn combine(parts: &[Fingerprint]) -> Fingerprint {
        Fingerprint(parts.iter().fold(0, |acc, p| mix(acc ^ p.0)))
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Generator {
    /// A generator for `profile`.
    pub fn new(profile: &Profile) -> Self {
        Generator {
            profile: profile.clone(),
            partition: Vec::new(),
            clustering: Vec::new(),
            values: vec![Vec::new(); usize::from(profile.columns)],
        }
    }

    /// Writes op `index` of `thread` as encoded rows into `rows`.
    pub fn batch(&mut self, thread: usize, index: u64, rows: &mut Packed) {
        let p = &self.profile;
        rows.clear();
        let mut op = SplitMix::new(&[p.seed, thread as u64, index]);
        let partition_id = op.below(p.partitions);
        let mut keys = SplitMix::new(&[p.seed, u64::MAX, partition_id]);
        let len = p.partition_key.sample(&mut keys);
        text(&mut keys, len, &mut self.partition);
        let global = index * p.threads as u64 + thread as u64;
        for j in 0..p.rows_per_batch {
            let mut ck_rng = SplitMix::new(&[p.seed, partition_id, u64::from(j)]);
            let ck_len = p.clustering_key.sample(&mut ck_rng);
            text(&mut ck_rng, ck_len, &mut self.clustering);
            // Unique timestamps make the final state independent of the
            // thread schedule: the newest write always wins.
            let timestamp = 1 + global * u64::from(p.rows_per_batch) + u64::from(j);
            let tombstone = p.tombstone_ratio > 0.0 && (op.next_u64() as f64 / u64::MAX as f64) < p.tombstone_ratio;
            if !tombstone {
                for value in &mut self.values {
                    let n = p.value.sample(&mut op);
                    text(&mut op, n, value);
                }
            }
            let cells = self.values.iter().enumerate().filter(|_| !tombstone).map(|(c, v)| Cell { column: c as u16, value: v });
            rows.push_with(|buf| encode_row(buf, &self.partition, &self.clustering, timestamp, tombstone, cells));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_a_pure_function_of_seed_thread_and_index() {
        let profile = Profile { tombstone_ratio: 0.2, ..Profile::default() };
        let (mut a, mut b) = (Generator::new(&profile), Generator::new(&profile));
        let (mut x, mut y) = (Packed::new(), Packed::new());
        a.batch(1, 7, &mut x);
        b.batch(0, 3, &mut y);
        b.batch(1, 7, &mut y);
        assert_eq!(x, y);
        b.batch(1, 8, &mut y);
        assert_ne!(x, y);
    }

    #[test]
    fn ops_split_evenly() {
        let profile = Profile { ops: 10, threads: 3, ..Profile::default() };
        let per: Vec<u64> = (0..3).map(|t| profile.ops_for(t)).collect();
        assert_eq!(per, [4, 3, 3]);
    }
}
