//! From rows to shards: the token, the byte-comparable sort key, and the
//! token range each shard owns; `prepared.rs` routes a replayed stream
//! ahead, off the clients' clock.

use memlab_sdk::{Entry, Packed, RowHead, RowView};

use crate::seam::ledger::Noted;

mod prepared;

pub use prepared::{Ahead, InsertAhead, MAX_PREPARED_BYTES, Prepared};

/// Murmur3 x64 128 (as Cassandra's Murmur3Partitioner), first 64 bits.
pub fn token(partition: &[u8]) -> i64 {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let fmix = |mut k: u64| {
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^ (k >> 33)
    };
    let (mut h1, mut h2) = (0u64, 0u64);
    let mut blocks = partition.chunks_exact(16);
    for block in &mut blocks {
        let mut k1 = u64::from_le_bytes(block[..8].try_into().unwrap_or_default());
        let mut k2 = u64::from_le_bytes(block[8..].try_into().unwrap_or_default());
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let (mut k1, mut k2) = (0u64, 0u64);
    // Cassandra reads each tail byte as a signed Java byte and widens it to
    // a long, so a byte >= 0x80 sets every bit above it; XOR (not OR) then
    // folds those bits into the bytes after it, as its switch does.
    for (i, &b) in tail.iter().enumerate() {
        let widened = i64::from(b as i8) as u64;
        if i < 8 {
            k1 ^= widened << (8 * i);
        } else {
            k2 ^= widened << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let len = partition.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1.wrapping_add(h2) as i64
}

/// The token as an unsigned, order-preserving number.
fn ordered(token: i64) -> u64 {
    (token as u64) ^ (1 << 63)
}

/// Appends the byte-comparable encoding of (token, partition, clustering):
/// the token big-endian with its sign flipped; the partition key with
/// 0x00 escaped as 0x00 0xFF and ended by 0x00 0x00, so a shorter key sorts
/// first; then the clustering key as is. `memcmp` order is then the
/// (token, partition, clustering) order.
pub fn sort_key(token: i64, partition: &[u8], clustering: &[u8], out: &mut Vec<u8>) {
    out.reserve(8 + partition.len() + 2 + clustering.len());
    out.extend_from_slice(&ordered(token).to_be_bytes());
    let mut rest = partition;
    while let Some(zero) = rest.iter().position(|&b| b == 0) {
        out.extend_from_slice(&rest[..=zero]);
        out.push(0xff);
        rest = &rest[zero + 1..];
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(clustering);
}

/// Splits the token ring evenly over `shards`, in token order.
#[derive(Debug, Clone, Copy)]
pub struct Router {
    shards: usize,
}

impl Router {
    /// A router over `shards` (at least one).
    pub fn new(shards: usize) -> Self {
        Router { shards: shards.max(1) }
    }

    /// The shard owning `token`.
    pub fn shard_of(&self, token: i64) -> usize {
        ((u128::from(ordered(token)) * self.shards as u128) >> 64) as usize
    }

    /// How many shards.
    pub fn shards(&self) -> usize {
        self.shards
    }
}

/// One client batch, routed: rows for the allocator and entries (with refs
/// still zero) for the memtable.
#[derive(Debug, Default)]
pub struct RoutedBatch {
    /// Which shard owns the batch's partition.
    pub shard: usize,
    /// Encoded rows.
    pub rows: Packed,
    /// Encoded entries; `set_refs` fills their refs.
    pub entries: Packed,
    /// The ledger's hashes of the batch, when it was routed ahead
    /// (`Prepared`); otherwise the write path hashes it.
    pub noted: Option<Noted>,
}

impl RoutedBatch {
    /// Routes rows of one partition (a client batch, as cassandra-stress
    /// writes them) into `self`, reusing its buffers.
    pub fn route(&mut self, router: &Router, rows: &Packed) -> Result<(), memlab_sdk::Error> {
        self.rows.clear();
        self.entries.clear();
        self.noted = None;
        let mut key = Vec::with_capacity(64);
        let mut partition_token = None;
        for record in rows.iter() {
            // Rows come from the generator or a stream file checked whole
            // when read: the keys are all routing needs.
            let RowHead { partition, clustering, timestamp, .. } = RowView::head(record)?;
            let token = *partition_token.get_or_insert_with(|| token(partition));
            key.clear();
            sort_key(token, partition, clustering, &mut key);
            self.entries.push_with(|buf| Entry { key: &key, timestamp, reference: 0 }.encode(buf));
            self.rows.push(record);
            self.shard = router.shard_of(token);
        }
        Ok(())
    }

    /// Writes the allocator's refs into the entries.
    pub fn set_refs(&mut self, refs: &[u64]) {
        set_refs(&mut self.entries, refs);
    }
}

/// Sets entry i's ref to `refs[i]`.
pub fn set_refs(entries: &mut Packed, refs: &[u64]) {
    entries.for_each_mut(|i, entry| {
        if let Some(&reference) = refs.get(i) {
            // `route` encoded every entry, header included.
            let _ = Entry::set_reference(entry, reference);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_follow_token_order() {
        let router = Router::new(8);
        assert_eq!(router.shard_of(i64::MIN), 0);
        assert_eq!(router.shard_of(i64::MAX), 7);
        assert_eq!(router.shard_of(-1), 3);
        assert_eq!(router.shard_of(0), 4);
    }

    #[test]
    fn murmur3_matches_reference_values() {
        // Reference: MurmurHash3_x64_128, seed 0, first half (mmh3.hash64).
        assert_eq!(token(b""), 0);
        assert_eq!(token(b"hello"), -3758069500696749310);
        assert_eq!(token(b"0123456789abcdefXYZ"), -7362412312553418723);
        // Cassandra's sign-extended tail (not mmh3's): worked from its
        // MurmurHash.hash3_x64_128 by an independent script.
        assert_eq!(token(&[0x80]), -5284281814142962636);
        assert_eq!(token("caf\u{e9}".as_bytes()), -5777272221172978824);
        assert_eq!(token(b"0123456789abcdef\xff\x01"), -9158794891579593695);
    }

    #[test]
    fn sort_key_orders_by_token_then_partition_then_clustering() {
        let key = |t, p: &[u8], c: &[u8]| {
            let mut out = Vec::new();
            sort_key(t, p, c, &mut out);
            out
        };
        assert!(key(-5, b"z", b"z") < key(3, b"a", b"a"));
        assert!(key(3, b"a", b"zz") < key(3, b"a\0", b""));
        assert!(key(3, b"a", b"a") < key(3, b"a", b"b"));
        // Every zero escaped, wherever it falls.
        let mut expected = ordered(3).to_be_bytes().to_vec();
        expected.extend_from_slice(&[0, 0xff, b'a', 0, 0xff, 0, 0xff, 0, 0, b'c']);
        assert_eq!(key(3, b"\0a\0\0", b"c"), expected);
    }
}
