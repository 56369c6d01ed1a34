//! In-order walks over the trie: an explicit stack, so deep keys cost heap,
//! not guest stack, and a walk can pause between `next` calls.

use crate::{NONE, Node, ROOT_SLOT, Trie};
use memlab_sdk::Entry;

/// A paused walk: the path from the root and the key it spells.
#[derive(Debug, Default)]
pub struct Cursor {
    stack: Vec<Frame>,
    key: Vec<u8>,
}

/// One node on the path. `step` is the next thing to visit there: for a
/// leaf or prefix 0 means "its entry", for branching nodes the next child
/// index (sparse) or byte (dense).
#[derive(Debug, Clone, Copy)]
struct Frame {
    ptr: u32,
    key_len: usize,
    step: usize,
}

/// Marks a frame as finished whatever its kind.
const DONE: usize = usize::MAX;

impl Cursor {
    /// A walk positioned before the first key `>= start`.
    pub(crate) fn seek(trie: &Trie, start: &[u8]) -> Cursor {
        let mut cursor = Cursor::default();
        let mut ptr = trie.nodes[ROOT_SLOT];
        let mut depth = 0;
        while ptr != NONE {
            let rest = &start[depth..];
            let mut frame = Frame { ptr, key_len: cursor.key.len(), step: 0 };
            let mut descend = None;
            match trie.node(ptr) {
                // A leaf under a non-empty rest spells a proper prefix of
                // `start`, which sorts before it.
                Node::Leaf => frame.step = if rest.is_empty() { 0 } else { DONE },
                // The tail spells the rest of one key: it is at or after
                // `start` exactly when the tail sorts at or after the rest.
                Node::Tail { at, len } => frame.step = if trie.bytes[at..at + len] >= *rest { 0 } else { DONE },
                Node::Prefix { p } if !rest.is_empty() => {
                    frame.step = 2;
                    descend = Some((trie.nodes[p + 2], 0));
                }
                Node::Chain { p, bytes } if !rest.is_empty() => {
                    let chain = trie.chain_bytes(bytes);
                    let common = chain.iter().zip(rest).take_while(|(a, b)| a == b).count();
                    if common == chain.len() {
                        frame.step = DONE;
                        cursor.key.extend_from_slice(chain);
                        descend = Some((trie.nodes[p + 2], chain.len()));
                    } else if common < rest.len() && chain[common] < rest[common] {
                        frame.step = DONE;
                    }
                }
                Node::Sparse { p, labels, count } if !rest.is_empty() => {
                    let at = trie.labels(labels, count).partition_point(|&b| b < rest[0]);
                    frame.step = at;
                    if at < count && trie.bytes[labels + at] == rest[0] {
                        frame.step = at + 1;
                        cursor.key.push(rest[0]);
                        descend = Some((trie.nodes[p + 2 + at], 1));
                    }
                }
                Node::Dense { p } if !rest.is_empty() => {
                    let label = rest[0] as usize;
                    frame.step = label;
                    let child = trie.nodes[p + 1 + label];
                    if child != NONE {
                        frame.step = label + 1;
                        cursor.key.push(rest[0]);
                        descend = Some((child, 1));
                    }
                }
                // `start` ends here: everything below sorts at or after it.
                _ => {}
            }
            cursor.stack.push(frame);
            let Some((child, consumed)) = descend else { break };
            ptr = child;
            depth += consumed;
        }
        cursor
    }

    /// The next entry in key order, if any.
    pub(crate) fn advance<'a>(&'a mut self, trie: &Trie) -> Option<Entry<'a>> {
        loop {
            let frame = self.stack.last_mut()?;
            self.key.truncate(frame.key_len);
            let node = trie.node(frame.ptr);
            let step = frame.step;
            let (leaf, child) = match node {
                Node::Leaf if step == 0 => (frame.ptr, NONE),
                Node::Tail { at, len } if step == 0 => {
                    self.key.extend_from_slice(&trie.bytes[at..at + len]);
                    (frame.ptr, NONE)
                }
                Node::Prefix { p } if step == 0 => (trie.nodes[p + 1], NONE),
                Node::Prefix { p } if step == 1 => (NONE, trie.nodes[p + 2]),
                Node::Chain { p, bytes } if step == 0 => {
                    self.key.extend_from_slice(trie.chain_bytes(bytes));
                    (NONE, trie.nodes[p + 2])
                }
                Node::Sparse { p, labels, count } if step < count => {
                    self.key.push(trie.bytes[labels + step]);
                    (NONE, trie.nodes[p + 2 + step])
                }
                Node::Dense { p } if step < 256 => match (step..256).find(|&b| trie.nodes[p + 1 + b] != NONE) {
                    Some(b) => {
                        frame.step = b;
                        self.key.push(b as u8);
                        (NONE, trie.nodes[p + 1 + b])
                    }
                    None => (NONE, NONE),
                },
                _ => (NONE, NONE),
            };
            if leaf == NONE && child == NONE {
                self.stack.pop();
                continue;
            }
            let frame = self.stack.last_mut()?;
            frame.step += 1;
            if child != NONE {
                let key_len = self.key.len();
                self.stack.push(Frame { ptr: child, key_len, step: 0 });
                continue;
            }
            let stamp = trie.stamp_of(leaf);
            return Some(Entry { key: &self.key, timestamp: stamp.timestamp, reference: stamp.reference });
        }
    }
}
