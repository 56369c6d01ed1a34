//! The generator: op `index` of `thread` from nothing but the profile.

use memlab_sdk::{Cell, encode_row};

use super::profile::{Popularity, Profile};
use super::{Op, OpKind, SplitMix};

const ALPHABET: &[u8; 64] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

/// Seeds a partition's own generators, apart from any op's.
const PARTITION_KEY: u64 = u64::MAX;
const PARTITION_ROWS: u64 = u64::MAX - 1;

fn text(rng: &mut SplitMix, len: usize, out: &mut Vec<u8>) {
    // Ten characters from each 64-bit draw (six bits each), filled in
    // place: pushing byte by byte cost ~10 instructions a byte.
    out.clear();
    out.resize(len, 0);
    for chunk in out.chunks_mut(10) {
        let mut bits = rng.next_u64();
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
        text(&mut rng, len, &mut self.clustering);
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
        text(&mut keys, len, &mut op.partition);
        let rows_here = p.clustering.rows.sample(&mut SplitMix::new(&[p.seed, PARTITION_ROWS, partition])).max(1);
        op.rows.clear();
        op.clustering.clear();
        op.limit = 0;
        match op.kind {
            OpKind::Insert => self.insert(thread, index, &mut rng, partition, rows_here, op),
            OpKind::Read => {
                self.clustering_key(partition, rng.below(rows_here));
                op.clustering.clone_from(&self.clustering);
            }
            OpKind::Scan => op.limit = m.scan_limit,
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
            if !tombstone {
                for (value, column) in self.values.iter_mut().zip(&p.columns) {
                    let n = column.size.sample(rng) as usize;
                    text(rng, n, value);
                }
            }
            let cells = self.values.iter().enumerate().filter(|_| !tombstone).map(|(c, v)| Cell { column: c as u16, value: v });
            op.rows.push_with(|buf| encode_row(buf, &op.partition, &self.clustering, timestamp, tombstone, cells));
        }
    }
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
            text(&mut a, len, &mut fast);
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
}
