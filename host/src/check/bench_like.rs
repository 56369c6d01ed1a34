//! Input as a bench makes it, so that `memlab check` cannot be told from a
//! bench by the shape of what it is given: rows from the shipped profiles'
//! own generator, keyed by the router's sort keys (the partition's Murmur3
//! token, the escaped partition, the clustering), with the generator's
//! timestamps, and only the keys one shard of a shipped shard count owns.
//! Check's odd-seeded rounds use it; the even ones keep the edge cases
//! (empty and 64 KiB keys, tied timestamps) no bench would send.

use memlab_sdk::RowView;

use crate::router::{Router, sort_key, token};
use crate::workload::{Generator, Op, OpKind, Profile, SplitMix};

/// The profiles memlab ships, as their files say.
const PROFILES: [&str; 4] = [
    include_str!("../../../benches/profiles/seed.toml"),
    include_str!("../../../benches/profiles/kv.toml"),
    include_str!("../../../benches/profiles/skewed.toml"),
    include_str!("../../../benches/profiles/mixed.toml"),
];

/// Shard counts the shipped configs use.
const SHARDS: [usize; 3] = [1, 8, 32];

/// Whether a round's seed asks for bench-shaped input.
pub(crate) fn round_is_bench_like(seed: u64) -> bool {
    seed & 1 == 1
}

/// One bench-shaped row.
pub(crate) struct Row {
    /// Its sort key.
    pub key: Vec<u8>,
    /// The sort key of its partition's start, which a bench scans from.
    pub partition_start: Vec<u8>,
    /// Its timestamp.
    pub timestamp: u64,
    /// The row itself.
    pub bytes: Vec<u8>,
}

/// An endless source of the rows one shard of a bench would be given.
pub(crate) struct BenchLike {
    generator: Generator,
    threads: u64,
    router: Router,
    shard: usize,
    next_op: u64,
    op: Op,
    queued: std::collections::VecDeque<Row>,
}

impl BenchLike {
    /// Picks a shipped profile, a shipped shard count and one of its
    /// shards from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut rng = SplitMix::new(&[seed, 0xbe4c]);
        let mut profile: Profile = toml::from_str(PROFILES[rng.below(PROFILES.len() as u64) as usize]).unwrap_or_default();
        profile.seed = seed;
        let shards = SHARDS[rng.below(SHARDS.len() as u64) as usize];
        BenchLike {
            threads: profile.threads.max(1) as u64,
            generator: Generator::new(&profile),
            router: Router::new(shards),
            shard: rng.below(shards as u64) as usize,
            next_op: 0,
            op: Op::default(),
            queued: Default::default(),
        }
    }

    /// The next row routed to this shard.
    pub(crate) fn next_row(&mut self) -> Row {
        loop {
            if let Some(row) = self.queued.pop_front() {
                return row;
            }
            let at = self.next_op;
            self.next_op += 1;
            // A shard that owns none of a small profile's partitions: take
            // the whole ring rather than loop.
            if at == 100_000 && self.queued.is_empty() {
                self.router = Router::new(1);
                self.shard = 0;
            }
            self.generator.op((at % self.threads) as usize, at / self.threads, &mut self.op);
            if self.op.kind != OpKind::Insert {
                continue;
            }
            for bytes in self.op.rows.iter() {
                let Ok(row) = RowView::decode(bytes) else { continue };
                let t = token(row.partition);
                if self.router.shard_of(t) != self.shard {
                    continue;
                }
                let (mut key, mut partition_start) = (Vec::new(), Vec::new());
                sort_key(t, row.partition, row.clustering, &mut key);
                sort_key(t, row.partition, &[], &mut partition_start);
                self.queued.push_back(Row { key, partition_start, timestamp: row.timestamp, bytes: bytes.to_vec() });
            }
        }
    }
}
