//! The generator: op `index` of `thread` from nothing but the profile.

use memlab_sdk::{Cell, encode_row};

use super::profile::{Popularity, Profile};
use super::secret::Salt;
use super::{Op, OpKind, SplitMix, mix};

const ALPHABET: &[u8; 64] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

/// Seeds a partition's own generators, apart from any op's.
const PARTITION_KEY: u64 = u64::MAX;
const PARTITION_ROWS: u64 = u64::MAX - 1;
/// The salt's domains: which field a content word keys.
const CLUSTERING_KEY: u64 = u64::MAX - 2;
const VALUE: u64 = u64::MAX - 3;

/// `len` characters of text: the public draws, each XORed with the
/// salt's word for this field and chunk when the stream is salted.
fn text(rng: &mut SplitMix, len: usize, out: &mut Vec<u8>, secret: Option<(Salt, [u64; 5])>) {
    // Ten characters from each 64-bit draw (six bits each), filled in
    // place: pushing byte by byte cost ~10 instructions a byte.
    out.clear();
    out.resize(len, 0);
    for (i, chunk) in out.chunks_mut(10).enumerate() {
        let mut bits = rng.next_u64() ^ secret.map_or(0, |(salt, field)| salt.word(field, i as u64));
        for byte in chunk {
            *byte = ALPHABET[(bits & 63) as usize];
            bits >>= 6;
        }
    }
}

/// Generates ops into reusable buffers.
#[derive(Debug)]
pub struct Generator {
    profile: Profile,
    clustering: Vec<u8>,
    values: Vec<Vec<u8>>,
}

impl Generator {
    /// A generator for `profile`.
    pub fn new(profile: &Profile) -> Self {
        Generator { profile: profile.clone(), clustering: Vec::new(), values: vec![Vec::new(); profile.columns.len()] }
    }

    fn partition_id(&self, rng: &mut SplitMix) -> u64 {
        let count = self.profile.partitions.count;
        match self.profile.partitions.distribution {
            Popularity::Uniform => rng.below(count),
            Popularity::Zipf { s } => super::zipf_rank(rng.unit(), count, s) - 1,
            Popularity::Hot { fraction, share } => {
                let hot = ((count as f64 * fraction) as u64).clamp(1, count);
                if rng.unit() < share || hot == count { rng.below(hot) } else { hot + rng.below(count - hot) }
            }
        }
    }

    fn clustering_key(&mut self, partition: u64, row: u64) {
        let p = &self.profile;
        let mut rng = SplitMix::new(&[p.seed, partition, row]);
        let len = p.clustering.key.sample(&mut rng) as usize;
        text(&mut rng, len, &mut self.clustering, p.salt.map(|s| (s, [CLUSTERING_KEY, p.seed, partition, row, 0])));
    }

    /// Writes op `index` of `thread` into `op`.
    pub fn op(&mut self, thread: usize, index: u64, op: &mut Op) {
        let p = &self.profile;
        let mut rng = SplitMix::new(&[p.seed, thread as u64, index]);
        let m = p.mix;
        let pick = rng.below(u64::from(m.insert) + u64::from(m.read) + u64::from(m.scan));
        op.kind = if pick < u64::from(m.insert) {
            OpKind::Insert
        } else if pick < u64::from(m.insert) + u64::from(m.read) {
            OpKind::Read
        } else {
            OpKind::Scan
        };
        let partition = self.partition_id(&mut rng);
        let mut keys = SplitMix::new(&[p.seed, PARTITION_KEY, partition]);
        let len = p.partitions.key.sample(&mut keys) as usize;
        text(&mut keys, len, &mut op.partition, p.salt.map(|s| (s, [PARTITION_KEY, p.seed, partition, 0, 0])));
        let rows_here = p.clustering.rows.sample(&mut SplitMix::new(&[p.seed, PARTITION_ROWS, partition])).max(1);
        op.rows.clear();
        op.clustering.clear();
        op.limit = 0;
        op.shape = shape(shape(op.kind as u64, partition), len as u64);
        match op.kind {
            OpKind::Insert => self.insert(thread, index, &mut rng, partition, rows_here, op),
            OpKind::Read => {
                let row = rng.below(rows_here);
                self.clustering_key(partition, row);
                op.clustering.clone_from(&self.clustering);
                op.shape = shape(shape(op.shape, row), self.clustering.len() as u64);
            }
            OpKind::Scan => {
                op.limit = m.scan_limit;
                op.shape = shape(op.shape, u64::from(op.limit));
            }
        }
    }

    fn insert(&mut self, thread: usize, index: u64, rng: &mut SplitMix, partition: u64, rows_here: u64, op: &mut Op) {
        let (threads, max_batch) = (self.profile.threads as u64, self.profile.max_batch());
        let n = self.profile.rows_per_batch.sample(rng).clamp(1, rows_here);
        let start = rng.below(rows_here - n + 1);
        let global = index * threads + thread as u64;
        for (k, row) in (start..start + n).enumerate() {
            self.clustering_key(partition, row);
            let p = &self.profile;
            // Unique timestamps make the final state independent of the
            // thread schedule: the newest write always wins.
            let timestamp = 1 + global * max_batch + k as u64;
            let tombstone = p.tombstone_ratio > 0.0 && rng.unit() < p.tombstone_ratio;
            op.shape = shape(shape(shape(shape(op.shape, row), self.clustering.len() as u64), timestamp), u64::from(tombstone));
            if !tombstone {
                for (c, (value, column)) in self.values.iter_mut().zip(&p.columns).enumerate() {
                    let n = column.size.sample(rng) as usize;
                    let field = [VALUE, p.seed, global, k as u64, c as u64];
                    text(rng, n, value, p.salt.map(|s| (s, field)));
                    op.shape = shape(op.shape, n as u64);
                }
            }
            let cells = self.values.iter().enumerate().filter(|_| !tombstone).map(|(c, v)| Cell { column: c as u16, value: v });
            op.rows.push_with(|buf| encode_row(buf, &op.partition, &self.clustering, timestamp, tombstone, cells));
        }
    }
}

/// Folds one shape draw into an op's shape.
fn shape(h: u64, draw: u64) -> u64 {
    mix(h.rotate_left(5) ^ draw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Dist, Mix};

    #[test]
    fn text_is_ten_characters_per_draw_in_order() {
        // The definition the recorded streams were generated with.
        fn by_byte(rng: &mut SplitMix, len: usize, out: &mut Vec<u8>) {
            out.clear();
            while out.len() < len {
                let mut bits = rng.next_u64();
                for _ in 0..10.min(len - out.len()) {
                    out.push(ALPHABET[(bits & 63) as usize]);
                    bits >>= 6;
                }
            }
        }
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for len in 0..70 {
            let (mut a, mut b) = (SplitMix::new(&[len as u64]), SplitMix::new(&[len as u64]));
            text(&mut a, len, &mut fast, None);
            by_byte(&mut b, len, &mut slow);
            assert_eq!(fast, slow, "len {len}");
            assert_eq!(a.next_u64(), b.next_u64(), "draws used for len {len}");
        }
    }

    #[test]
    fn ops_are_a_pure_function_of_seed_thread_and_index() {
        let profile = Profile { tombstone_ratio: 0.2, mix: Mix { insert: 5, read: 3, scan: 2, scan_limit: 10 }, ..Profile::default() };
        let (mut a, mut b) = (Generator::new(&profile), Generator::new(&profile));
        let (mut x, mut y) = (Op::default(), Op::default());
        for index in 0..200 {
            a.op(1, index, &mut x);
            b.op(0, index + 3, &mut y);
            b.op(1, index, &mut y);
            assert_eq!(x, y);
        }
        b.op(1, 8, &mut y);
        a.op(1, 9, &mut x);
        assert_ne!(x, y);
    }

    #[test]
    fn the_mix_and_the_batch_sizes_are_honoured() {
        let profile = Profile {
            mix: Mix { insert: 6, read: 3, scan: 1, scan_limit: 7 },
            rows_per_batch: Dist::uniform(1, 4),
            clustering: crate::workload::Clustering { rows: Dist::fixed(3), key: Dist::fixed(5) },
            ..Profile::default()
        };
        let mut g = Generator::new(&profile);
        let mut op = Op::default();
        let mut counts = [0u32; 3];
        for index in 0..10_000 {
            g.op(0, index, &mut op);
            counts[op.kind as usize] += 1;
            match op.kind {
                OpKind::Insert => assert!((1..=3).contains(&op.rows.len())),
                OpKind::Read => assert_eq!(op.clustering.len(), 5),
                OpKind::Scan => assert_eq!(op.limit, 7),
            }
        }
        assert!((5_700..6_300).contains(&counts[0]) && (2_700..3_300).contains(&counts[1]), "{counts:?}");
    }

    /// Each row's public parts: timestamp, tombstone, and the length of
    /// every key and value.
    fn outline(op: &Op) -> Vec<(u64, bool, Vec<usize>)> {
        op.rows
            .iter()
            .map(|r| {
                let row = memlab_sdk::RowView::decode(r).expect("a generated row parses");
                let mut lens = vec![row.partition.len(), row.clustering.len()];
                lens.extend(row.cells().map(|c| c.value.len()));
                (row.timestamp, row.tombstone, lens)
            })
            .collect()
    }

    #[test]
    fn a_salt_keys_every_byte_of_content_and_nothing_of_the_shape() {
        let profile = Profile { tombstone_ratio: 0.1, mix: Mix { insert: 6, read: 3, scan: 1, scan_limit: 10 }, ..Profile::default() };
        let salted = |salt: &str| Profile { salt: Some(salt.parse().expect("a salt")), ..profile.clone() };
        let mut plain = Generator::new(&profile);
        let (mut a, mut a_again) = (Generator::new(&salted("0123456789abcdef0123456789abcdef")), Generator::new(&salted("0123456789abcdef0123456789abcdef")));
        let mut b = Generator::new(&salted("fedcba9876543210fedcba9876543210"));
        let (mut p, mut x, mut x2, mut y) = (Op::default(), Op::default(), Op::default(), Op::default());
        let (mut values, mut same) = (0, 0);
        for index in 0..2_000 {
            plain.op(1, index, &mut p);
            a.op(1, index, &mut x);
            a_again.op(1, index, &mut x2);
            b.op(1, index, &mut y);
            assert_eq!(x, x2, "one salt, one stream: every variant sees the same bytes");
            assert_eq!((p.kind, p.shape, p.limit, p.partition.len(), p.clustering.len()), (x.kind, x.shape, x.limit, x.partition.len(), x.clustering.len()));
            assert_eq!((y.shape, outline(&y)), (x.shape, outline(&x)), "op {index}: a salt changes no size, timestamp or tombstone");
            assert_eq!(outline(&p), outline(&x));
            assert_ne!(p.partition, x.partition, "op {index}: the partition key is salted");
            assert_ne!(x.partition, y.partition);
            if x.kind == OpKind::Read {
                assert_ne!(p.clustering, x.clustering, "op {index}: the clustering key is salted");
            }
            for (r, s) in p.rows.iter().zip(x.rows.iter()) {
                let (r, s) = (memlab_sdk::RowView::decode(r).expect("row"), memlab_sdk::RowView::decode(s).expect("row"));
                assert_ne!(r.clustering, s.clustering, "op {index}: a row's clustering key is salted");
                for (c, d) in r.cells().zip(s.cells()) {
                    values += 1;
                    same += usize::from(c.value == d.value);
                }
            }
        }
        // A 4-character value may match by chance (1 in 2^24), no more.
        assert!(values > 10_000 && same <= 2, "{same} of {values} values the same salted and not");
    }
}
