//! Input as a bench makes it, so that `memlab check` cannot be told from a
//! bench by the shape of what it is given: rows from the shipped profiles'
//! own generator and seeds, salted as a bench salts them (with a salt
//! drawn from the round's seed, which `memlab check` draws secretly),
//! keyed by the router's sort keys (the partition's Murmur3 token, the
//! escaped partition, the clustering), with the generator's
//! timestamps, and only the keys one shard owns, of a shard count drawn
//! from 1 to 64. Rows arrive as racing client threads send them: each
//! thread's ops in order, the threads interleaved in bursts of random
//! length, so a key may arrive older than the newest seen, as in any
//! bench of two or more threads.
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

/// The most shards a drawn shard count has.
const MAX_SHARDS: u64 = 64;
/// The most client threads a drawn race has.
const MAX_THREADS: u64 = 16;
/// The longest run of one thread's ops before another thread's.
const MAX_BURST: u64 = 64;

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
    router: Router,
    shard: usize,
    /// Ops taken, over all threads.
    taken: u64,
    /// Each thread's next op.
    next_op: Vec<u64>,
    /// The racing thread, and how many more of its ops come first.
    racing: (usize, u64),
    rng: SplitMix,
    op: Op,
    queued: std::collections::VecDeque<Row>,
}

impl BenchLike {
    /// Picks a shipped profile, a shard count (1 to 64) and one of its
    /// shards, and a number of racing threads (1 in 8 races alone), from
    /// `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut rng = SplitMix::new(&[seed, 0xbe4c]);
        let mut profile: Profile = toml::from_str(PROFILES[rng.below(PROFILES.len() as u64) as usize]).unwrap_or_default();
        // The profile's own seed, so the shape is a bench's; the content
        // keyed by the round's secret, as a bench keys it by its own.
        profile.salt = Some(crate::workload::Salt::drawn_from(seed));
        profile.threads = if rng.below(8) == 0 { 1 } else { 2 + rng.below(MAX_THREADS - 1) as usize };
        let shards = 1 + rng.below(MAX_SHARDS) as usize;
        BenchLike {
            next_op: vec![0; profile.threads],
            generator: Generator::new(&profile),
            router: Router::new(shards),
            shard: rng.below(shards as u64) as usize,
            taken: 0,
            racing: (0, 0),
            rng,
            op: Op::default(),
            queued: Default::default(),
        }
    }

    /// The thread whose op comes next: the racing one, until its burst ends.
    fn next_thread(&mut self) -> usize {
        if self.racing.1 == 0 {
            self.racing = (self.rng.below(self.next_op.len() as u64) as usize, 1 + self.rng.below(MAX_BURST));
        }
        self.racing.1 -= 1;
        self.racing.0
    }

    /// The next row routed to this shard.
    pub(crate) fn next_row(&mut self) -> Row {
        loop {
            if let Some(row) = self.queued.pop_front() {
                return row;
            }
            self.taken += 1;
            // A shard that owns none of a small profile's partitions: take
            // the whole ring rather than loop.
            if self.taken == 100_000 && self.queued.is_empty() {
                self.router = Router::new(1);
                self.shard = 0;
            }
            let thread = self.next_thread();
            let index = self.next_op[thread];
            self.next_op[thread] += 1;
            self.generator.op(thread, index, &mut self.op);
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
