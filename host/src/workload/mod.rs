//! The deterministic stream. Every op is a pure function of (profile,
//! seed, thread, op index), so every variant sees the same bytes whatever
//! the thread schedule; the fingerprint proves it. A stream can also be
//! written to a file (`memlab stream`) and replayed.

mod dist;
mod generate;
mod profile;
mod secret;
mod stream_file;

pub use dist::{Dist, DistSpec, zipf_rank};
pub use generate::Generator;
pub use profile::{Clustering, Column, Mix, Partitions, Popularity, Profile, ProfileError, parse_duration, resolve_stream_path};
pub use secret::{BadSalt, Salt};
pub use stream_file::{StreamFile, StreamFileError, write_stream_file};

use memlab_sdk::Packed;

/// What an op does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// A batch of rows into one partition.
    #[default]
    Insert,
    /// A point read of one row.
    Read,
    /// A range scan from a partition's start.
    Scan,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 3] = [OpKind::Insert, OpKind::Read, OpKind::Scan];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Insert => "insert",
            OpKind::Read => "read",
            OpKind::Scan => "scan",
        }
    }
}

/// One op, in reusable buffers. Two ops are equal when their bytes are:
/// the shape says how a generator drew them, which a file cannot.
#[derive(Debug, Clone, Default)]
pub struct Op {
    /// What it does.
    pub kind: OpKind,
    /// Insert: the encoded rows, all of one partition.
    pub rows: Packed,
    /// Read and scan: the partition key.
    pub partition: Vec<u8>,
    /// Read: the clustering key.
    pub clustering: Vec<u8>,
    /// Scan: rows at most.
    pub limit: u32,
    /// The op's shape: every draw that is not content (its kind,
    /// partition, rows, sizes, timestamps, tombstones), folded; the same
    /// whatever the stream's salt.
    pub shape: u64,
}

impl PartialEq for Op {
    fn eq(&self, other: &Op) -> bool {
        (self.kind, &self.rows, &self.partition, &self.clustering, self.limit) == (other.kind, &other.rows, &other.partition, &other.clustering, other.limit)
    }
}

impl Eq for Op {}

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

    /// A uniform float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What a thread's ops fold into: the stream's fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// Folds one op in.
    pub fn add(&mut self, op: &Op) {
        let mut h = self.0 ^ 0x5155_4943_4b46_5052 ^ op.kind as u64;
        match op.kind {
            OpKind::Insert => {
                for record in op.rows.iter() {
                    h = fnv(h, record);
                }
            }
            OpKind::Read | OpKind::Scan => {
                h = fnv(fnv(h, &op.partition), &op.clustering);
                h = fnv(h, &op.limit.to_le_bytes());
            }
        }
        self.0 = mix(h);
    }

    /// Folds one op's shape in (a stream's shape print: what two runs of
    /// one profile share whatever their salts).
    pub fn add_shape(&mut self, op: &Op) {
        self.0 = mix(self.0 ^ op.shape);
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

/// Folds `bytes` into `h` eight at a time (the fingerprint hashes every
/// byte of the stream, so a byte-at-a-time hash would cost the harness).
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ bytes.len() as u64
}

/// Where ops come from: generated from a profile, or replayed from a file.
#[derive(Debug, Clone)]
pub enum Stream {
    /// Generated on the fly.
    Generated(Box<Profile>),
    /// Read from a stream file.
    Replayed(std::sync::Arc<StreamFile>),
}

impl Stream {
    /// The stream a profile describes (loading its `stream` file if set,
    /// generating it all first if `materialize`).
    pub fn of(profile: &Profile) -> Result<Stream, StreamFileError> {
        match &profile.stream {
            Some(path) => Ok(Stream::Replayed(std::sync::Arc::new(StreamFile::read(path)?))),
            None if profile.materialize => Ok(Stream::Replayed(std::sync::Arc::new(StreamFile::materialized(profile)?))),
            None => Ok(Stream::Generated(Box::new(profile.clone()))),
        }
    }

    /// Client threads.
    pub fn threads(&self) -> usize {
        match self {
            Stream::Generated(p) => p.threads,
            Stream::Replayed(f) => f.threads(),
        }
    }

    /// Ops of `thread` in count mode, or `None` when it runs for a duration.
    pub fn ops_for(&self, thread: usize) -> Option<u64> {
        match self {
            Stream::Generated(p) if p.duration.is_some() => None,
            Stream::Generated(p) => Some(p.ops_for(thread)),
            Stream::Replayed(f) => Some(f.ops_for(thread)),
        }
    }

    /// A cursor over ops.
    pub fn ops(&self) -> OpSource {
        match self {
            Stream::Generated(p) => OpSource::Generated(Box::new(Generator::new(p))),
            Stream::Replayed(f) => OpSource::Replayed(std::sync::Arc::clone(f)),
        }
    }
}

/// Produces op `index` of `thread` into a reusable [`Op`].
#[derive(Debug)]
pub enum OpSource {
    /// From the generator.
    Generated(Box<Generator>),
    /// From a stream file.
    Replayed(std::sync::Arc<StreamFile>),
}

impl OpSource {
    /// Fills `op`; false past the end of a replayed thread's ops.
    pub fn op(&mut self, thread: usize, index: u64, op: &mut Op) -> bool {
        match self {
            OpSource::Generated(g) => {
                g.op(thread, index, op);
                true
            }
            OpSource::Replayed(f) => f.op(thread, index, op),
        }
    }
}
