//! `trie`: a byte-wise trie in flat buffers, in the manner of Cassandra's
//! in-memory trie (CASSANDRA-17240). Nodes are runs of `u32` words in one
//! vector and address each other by word offset; label and key bytes live
//! in a second vector, and the stamps (timestamp, ref) of keys that end
//! inside the trie in a third. Keys are never stored whole: a key is its
//! path. The host's `shards` setting makes it the "sharded trie" (one trie
//! per token range).
//!
//! Node kinds, at word offset `p` (`hdr` = kind | count-or-length << 8):
//! - chain `[hdr, byte-offset, child]`: a run of bytes with one child: the
//!   shared head of keys below a branch, or the head of a tail longer than
//!   a tail record holds;
//! - sparse `[hdr, byte-offset, child; capacity]`: up to 6, 16 or 40
//!   children (the capacity follows from the count), labels sorted; a full
//!   one is copied into the next size, and its old words and labels are
//!   reused by the next node of that size;
//! - dense `[hdr, child; 256]`: a child slot per byte value, for more than
//!   40 children;
//! - prefix `[hdr, leaf, child]`: an entry whose key is a prefix of others.
//!
//! A key's unique tail ends in a *tail record* in the byte vector,
//! `[len: u8, tail bytes, timestamp, ref]` (see `tail.rs`): no node words
//! and no separate stamp, since most keys end this way.
//!
//! A pointer is 0 (none), `LEAF | stamp index`, `TAIL | record offset`, or
//! a node's word offset. Word 0 is the root's slot, so no node sits at
//! offset 0.

mod cursor;
mod sparse;
mod tail;

use cursor::Cursor;
use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats};
use sparse::{SPARSE_SIZES, sparse_class};

const NONE: u32 = 0;
const LEAF: u32 = 1 << 31;
const TAIL: u32 = 1 << 30;
const ROOT_SLOT: usize = 0;

const CHAIN: u32 = 1;
const SPARSE: u32 = 2;
const DENSE: u32 = 3;
const PREFIX: u32 = 4;

const MAX_CHAIN: usize = (1 << 24) - 1;

/// The trie.
#[derive(Debug)]
pub struct Trie {
    nodes: Vec<u32>,
    bytes: Vec<u8>,
    entries: Vec<Stamp>,
    kinds: [u64; 5],
    dead_words: u64,
    dead_bytes: u64,
    /// Distinct keys held, and how many end in a tail record.
    keys: u64,
    tails: u64,
    /// Freed sparse nodes and label runs, per size, for reuse.
    free_nodes: [Vec<u32>; 3],
    free_labels: [Vec<u32>; 3],
}

#[derive(Debug, Clone, Copy)]
struct Stamp {
    timestamp: u64,
    reference: u64,
}

impl Stamp {
    fn of(entry: &Entry<'_>) -> Stamp {
        Stamp { timestamp: entry.timestamp, reference: entry.reference }
    }
}

/// A node as its kind needs it, read from the flat buffers.
#[derive(Debug, Clone, Copy)]
enum Node {
    Leaf,
    /// A tail record: its bytes are `bytes[at..at + len]`, its stamp after.
    Tail {
        at: usize,
        len: usize,
    },
    Chain {
        p: usize,
        bytes: (usize, usize),
    },
    Sparse {
        p: usize,
        labels: usize,
        count: usize,
    },
    Dense {
        p: usize,
    },
    Prefix {
        p: usize,
    },
}

impl Trie {
    fn node(&self, ptr: u32) -> Node {
        if ptr & LEAF != 0 {
            return Node::Leaf;
        }
        if ptr & TAIL != 0 {
            let record = (ptr & !TAIL) as usize;
            return Node::Tail { at: record + 1, len: self.bytes[record] as usize };
        }
        let p = ptr as usize;
        let hdr = self.nodes[p];
        let extent = (hdr >> 8) as usize;
        match hdr & 0xff {
            CHAIN => Node::Chain { p, bytes: (self.nodes[p + 1] as usize, extent) },
            SPARSE => Node::Sparse { p, labels: self.nodes[p + 1] as usize, count: extent },
            DENSE => Node::Dense { p },
            _ => Node::Prefix { p },
        }
    }

    fn chain_bytes(&self, (offset, len): (usize, usize)) -> &[u8] {
        &self.bytes[offset..offset + len]
    }

    fn labels(&self, labels: usize, count: usize) -> &[u8] {
        &self.bytes[labels..labels + count]
    }

    fn alloc(&mut self, kind: u32, extent: usize, words: &[u32], more_zeroes: usize) -> Result<u32, Error> {
        let p = self.nodes.len();
        if p + 1 + words.len() + more_zeroes >= TAIL as usize {
            return Err(Error::Other("trie node buffer passed 4 GiB".into()));
        }
        self.nodes.push(kind | (extent as u32) << 8);
        self.nodes.extend_from_slice(words);
        self.nodes.resize(self.nodes.len() + more_zeroes, NONE);
        self.kinds[kind as usize] += 1;
        Ok(p as u32)
    }

    fn alloc_bytes(&mut self, bytes: &[u8]) -> u32 {
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(bytes);
        at
    }

    /// A leaf for a new key that ends at a branching node.
    fn new_leaf(&mut self, entry: &Entry<'_>) -> Result<u32, Error> {
        self.keys += 1;
        self.leaf_of(Stamp::of(entry))
    }

    fn leaf_of(&mut self, stamp: Stamp) -> Result<u32, Error> {
        let index = self.entries.len() as u32;
        if index >= LEAF {
            return Err(Error::Other("trie holds 2^31 stamps already".into()));
        }
        self.entries.push(stamp);
        Ok(LEAF | index)
    }

    /// A new key's unique `tail`: its last 255 bytes in a tail record,
    /// under chains for any before them.
    fn new_tail(&mut self, tail: &[u8], entry: &Entry<'_>) -> Result<u32, Error> {
        self.keys += 1;
        let (head, last) = tail.split_at(tail.len().saturating_sub(tail::MAX_TAIL));
        let mut child = self.tail_record(last, Stamp::of(entry))?;
        for piece in head.rchunks(MAX_CHAIN) {
            let at = self.alloc_bytes(piece);
            child = self.alloc(CHAIN, piece.len(), &[at, child], 0)?;
        }
        Ok(child)
    }

    /// The stamp of a leaf or tail record.
    fn stamp_of(&self, ptr: u32) -> Stamp {
        if ptr & LEAF != 0 { self.entries[(ptr & !LEAF) as usize] } else { self.record_stamp(ptr) }
    }

    /// Memtable contract 2 for a key held at `ptr` (a leaf or tail record):
    /// the higher timestamp wins, and on equal timestamps the later insert.
    fn restamp(&mut self, ptr: u32, entry: &Entry<'_>) {
        if entry.timestamp < self.stamp_of(ptr).timestamp {
            return;
        }
        if ptr & LEAF != 0 {
            self.entries[(ptr & !LEAF) as usize] = Stamp::of(entry);
        } else {
            self.set_record_stamp(ptr, Stamp::of(entry));
        }
    }

    /// Splits chain `p` after its first `common` bytes, where `key` leaves it.
    fn split_chain(&mut self, slot: usize, p: usize, chain: (usize, usize), common: usize, key_rest: &[u8], entry: &Entry<'_>) -> Result<(), Error> {
        let (offset, len) = chain;
        let child = self.nodes[p + 2];
        let branch = if common == key_rest.len() {
            let leaf = self.new_leaf(entry)?;
            let below = self.alloc(CHAIN, len - common, &[(offset + common) as u32, child], 0)?;
            self.alloc(PREFIX, 0, &[leaf, below], 0)?
        } else {
            let old_tail = if common + 1 < len { self.alloc(CHAIN, len - common - 1, &[(offset + common + 1) as u32, child], 0)? } else { child };
            let new_tail = self.new_tail(&key_rest[common + 1..], entry)?;
            let (old_label, new_label) = (self.bytes[offset + common], key_rest[common]);
            let (labels, children) =
                if old_label < new_label { ([old_label, new_label], [old_tail, new_tail]) } else { ([new_label, old_label], [new_tail, old_tail]) };
            self.alloc_sparse(&labels, &children)?
        };
        if common > 0 {
            // Keep the chain as the shared head, now shorter.
            self.nodes[p] = CHAIN | (common as u32) << 8;
            self.nodes[p + 2] = branch;
        } else {
            self.nodes[slot] = branch;
            self.kinds[CHAIN as usize] -= 1;
            self.dead_words += 3;
        }
        Ok(())
    }
}

impl Memtable for Trie {
    const NAME: &'static str = "trie";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = Cursor;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let capacity: usize = params.get("node_capacity", 1 << 18)?;
        let mut nodes = Vec::with_capacity(capacity.max(1));
        nodes.push(NONE);
        Ok(Trie {
            nodes,
            bytes: Vec::with_capacity(capacity),
            entries: Vec::new(),
            kinds: [0; 5],
            dead_words: 0,
            dead_bytes: 0,
            keys: 0,
            tails: 0,
            free_nodes: Default::default(),
            free_labels: Default::default(),
        })
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        let key = entry.key;
        let mut slot = ROOT_SLOT;
        let mut depth = 0;
        loop {
            let ptr = self.nodes[slot];
            let rest = &key[depth..];
            if ptr == NONE {
                self.nodes[slot] = self.new_tail(rest, &entry)?;
                return Ok(());
            }
            match self.node(ptr) {
                Node::Leaf if rest.is_empty() => {
                    self.restamp(ptr, &entry);
                    return Ok(());
                }
                Node::Tail { at, len } => {
                    let tail = &self.bytes[at..at + len];
                    if tail == rest {
                        self.restamp(ptr, &entry);
                        return Ok(());
                    }
                    let common = tail.iter().zip(rest).take_while(|(a, b)| a == b).count();
                    return self.split_tail(slot, ptr, common, rest, &entry);
                }
                Node::Leaf => {
                    let prefix = self.alloc(PREFIX, 0, &[ptr, NONE], 0)?;
                    self.nodes[slot] = prefix;
                    slot = prefix as usize + 2;
                }
                Node::Prefix { p } if rest.is_empty() => {
                    self.restamp(self.nodes[p + 1], &entry);
                    return Ok(());
                }
                Node::Prefix { p } => slot = p + 2,
                Node::Chain { p, bytes } => {
                    let chain = self.chain_bytes(bytes);
                    let common = chain.iter().zip(rest).take_while(|(a, b)| a == b).count();
                    if common < chain.len() {
                        return self.split_chain(slot, p, bytes, common, rest, &entry);
                    }
                    slot = p + 2;
                    depth += common;
                }
                Node::Sparse { p, .. } | Node::Dense { p } if rest.is_empty() => {
                    let leaf = self.new_leaf(&entry)?;
                    self.nodes[slot] = self.alloc(PREFIX, 0, &[leaf, p as u32], 0)?;
                    return Ok(());
                }
                Node::Sparse { p, labels, count } => {
                    let label = rest[0];
                    let at = self.labels(labels, count).partition_point(|&b| b < label);
                    if at < count && self.bytes[labels + at] == label {
                        slot = p + 2 + at;
                        depth += 1;
                        continue;
                    }
                    let child = self.new_tail(&rest[1..], &entry)?;
                    if count == SPARSE_SIZES[sparse_class(count)] {
                        return self.grow_sparse(slot, p, (labels, count), (at, label), child);
                    }
                    self.bytes.copy_within(labels + at..labels + count, labels + at + 1);
                    self.bytes[labels + at] = label;
                    self.nodes.copy_within(p + 2 + at..p + 2 + count, p + 3 + at);
                    self.nodes[p + 2 + at] = child;
                    self.nodes[p] = SPARSE | ((count + 1) as u32) << 8;
                    return Ok(());
                }
                Node::Dense { p } => {
                    slot = p + 1 + rest[0] as usize;
                    depth += 1;
                }
            }
        }
    }

    fn get<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>> {
        let mut ptr = self.nodes[ROOT_SLOT];
        let mut depth = 0;
        let leaf = loop {
            if ptr == NONE {
                return None;
            }
            let rest = &key[depth..];
            match self.node(ptr) {
                Node::Leaf => break rest.is_empty().then_some(ptr)?,
                Node::Tail { at, len } => break (self.bytes[at..at + len] == *rest).then_some(ptr)?,
                Node::Prefix { p } if rest.is_empty() => break self.nodes[p + 1],
                Node::Prefix { p } => ptr = self.nodes[p + 2],
                Node::Chain { p, bytes } => {
                    let chain = self.chain_bytes(bytes);
                    if !rest.starts_with(chain) {
                        return None;
                    }
                    depth += chain.len();
                    ptr = self.nodes[p + 2];
                }
                Node::Sparse { p, labels, count } => {
                    let label = *rest.first()?;
                    let at = self.labels(labels, count).iter().position(|&b| b == label)?;
                    ptr = self.nodes[p + 2 + at];
                    depth += 1;
                }
                Node::Dense { p } => {
                    ptr = self.nodes[p + 1 + *rest.first()? as usize];
                    depth += 1;
                }
            }
        };
        let stamp = self.stamp_of(leaf);
        Some(Entry { key, timestamp: stamp.timestamp, reference: stamp.reference })
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        let mut cursor = Cursor::seek(self, start);
        for _ in 0..limit {
            let Some(entry) = cursor.advance(self) else { break };
            if end.is_some_and(|end| entry.key >= end) {
                break;
            }
            out.push_with(|buf| entry.encode(buf));
        }
    }

    fn cursor(&self) -> Cursor {
        Cursor::seek(self, &[])
    }

    fn next(&self, position: &mut Cursor, max_bytes: usize, out: &mut Packed) {
        while let Some(entry) = position.advance(self) {
            out.push_with(|buf| entry.encode(buf));
            if out.data_len() >= max_bytes {
                break;
            }
        }
    }

    fn stats(&self) -> Stats {
        let free_lists: usize = self.free_nodes.iter().chain(&self.free_labels).map(Vec::len).sum();
        let index_bytes = (self.nodes.len() + free_lists) * 4 + self.bytes.len() + self.entries.len() * size_of::<Stamp>();
        vec![
            Stat::Entries.with(self.keys),
            Stat::IndexBytes.with(index_bytes as u64),
            ("chain-nodes".into(), self.kinds[CHAIN as usize]),
            ("sparse-nodes".into(), self.kinds[SPARSE as usize]),
            ("dense-nodes".into(), self.kinds[DENSE as usize]),
            ("prefix-nodes".into(), self.kinds[PREFIX as usize]),
            ("tail-records".into(), self.tails),
            ("dead-bytes".into(), self.dead_words * 4 + self.dead_bytes),
        ]
    }
}

memlab_sdk::export!(memtable: Trie);
