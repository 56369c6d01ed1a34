//! Sparse nodes in three sizes, and their growth into the next size or a
//! dense node; freed nodes and label runs are reused per size.

use memlab_sdk::Error;

use crate::{DENSE, SPARSE, Trie};

/// Sparse node sizes. Cassandra's trie caps sparse nodes at 6; here a
/// partition's rows (about 10 under the seed profile) would then make every
/// partition node dense, 1 KiB each, which was two thirds of the index.
pub(crate) const SPARSE_SIZES: [usize; 3] = [6, 16, 40];

/// The size class of a sparse node holding `count` children.
pub(crate) fn sparse_class(count: usize) -> usize {
    SPARSE_SIZES.iter().position(|&size| count <= size).unwrap_or(SPARSE_SIZES.len() - 1)
}

impl Trie {
    /// A sparse node of the smallest size that holds `labels.len()`
    /// children, reusing a freed one of that size when there is one.
    pub(crate) fn alloc_sparse(&mut self, labels: &[u8], children: &[u32]) -> Result<u32, Error> {
        let class = sparse_class(labels.len());
        let size = SPARSE_SIZES[class];
        let at = match self.free_labels[class].pop() {
            Some(at) => at,
            None => {
                let at = self.alloc_bytes(labels);
                self.bytes.resize(self.bytes.len() + size - labels.len(), 0);
                at
            }
        };
        self.bytes[at as usize..at as usize + labels.len()].copy_from_slice(labels);
        let hdr = SPARSE | (labels.len() as u32) << 8;
        let Some(p) = self.free_nodes[class].pop() else {
            return self.alloc(SPARSE, labels.len(), &[&[at][..], children].concat(), size - children.len());
        };
        let p = p as usize;
        self.nodes[p] = hdr;
        self.nodes[p + 1] = at;
        self.nodes[p + 2..p + 2 + children.len()].copy_from_slice(children);
        self.kinds[SPARSE as usize] += 1;
        self.dead_words -= 2 + size as u64;
        Ok(p as u32)
    }

    /// Gives a sparse node's words and labels back for reuse.
    fn free_sparse(&mut self, p: usize, labels: usize, count: usize) {
        let class = sparse_class(count);
        self.free_nodes[class].push(p as u32);
        self.free_labels[class].push(labels as u32);
        self.kinds[SPARSE as usize] -= 1;
        self.dead_words += 2 + SPARSE_SIZES[class] as u64;
    }

    /// Adds child `label` at `at` to the full sparse node `p`: copies it
    /// into the next size, or into a dense node past the largest.
    pub(crate) fn grow_sparse(&mut self, slot: usize, p: usize, (labels, count): (usize, usize), (at, label): (usize, u8), child: u32) -> Result<(), Error> {
        let mut new_labels = self.labels(labels, count).to_vec();
        let mut children = self.nodes[p + 2..p + 2 + count].to_vec();
        new_labels.insert(at, label);
        children.insert(at, child);
        let grown = if count < SPARSE_SIZES[SPARSE_SIZES.len() - 1] {
            self.alloc_sparse(&new_labels, &children)?
        } else {
            let dense = self.alloc(DENSE, 0, &[], 256)?;
            for (&b, &c) in new_labels.iter().zip(&children) {
                self.nodes[dense as usize + 1 + b as usize] = c;
            }
            dense
        };
        self.free_sparse(p, labels, count);
        self.nodes[slot] = grown;
        Ok(())
    }
}
