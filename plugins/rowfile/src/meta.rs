//! Segment metadata from sorted input, the lean way (CASSANDRA-21083):
//! rows arrive in partition then clustering order, so the clustering bounds
//! need only each partition's first and last row.

use memlab_sdk::{RowView, SegmentMeta};

/// Folds rows into a [`SegmentMeta`], with per-partition work only at
/// partition boundaries.
#[derive(Debug, Default)]
pub struct SortedMeta {
    meta: SegmentMeta,
    partition: Vec<u8>,
    last_clustering: Vec<u8>,
}

impl SortedMeta {
    /// Accounts one row; rows must come in key order.
    pub fn observe(&mut self, row: &RowView<'_>) {
        if self.meta.rows == 0 || row.partition != self.partition.as_slice() {
            self.close_partition();
            // First row of a partition: its smallest clustering.
            if self.meta.rows == 0 || row.clustering < self.meta.min_clustering.as_slice() {
                self.meta.min_clustering.clear();
                self.meta.min_clustering.extend_from_slice(row.clustering);
            }
            self.partition.clear();
            self.partition.extend_from_slice(row.partition);
            self.meta.partitions += 1;
        }
        self.last_clustering.clear();
        self.last_clustering.extend_from_slice(row.clustering);
        let m = &mut self.meta;
        m.min_timestamp = if m.rows == 0 { row.timestamp } else { m.min_timestamp.min(row.timestamp) };
        m.max_timestamp = m.max_timestamp.max(row.timestamp);
        m.tombstones += u64::from(row.tombstone);
        m.rows += 1;
    }

    /// Rows seen so far.
    pub fn rows(&self) -> u64 {
        self.meta.rows
    }

    /// The metadata, with `checksum`; the tracker starts over.
    pub fn finish(&mut self, checksum: u64) -> SegmentMeta {
        self.close_partition();
        let mut meta = std::mem::take(&mut self.meta);
        meta.checksum = checksum;
        *self = SortedMeta::default();
        meta
    }

    /// Folds the finished partition's last clustering into the bounds.
    fn close_partition(&mut self) {
        if self.meta.rows > 0 && self.last_clustering.as_slice() > self.meta.max_clustering.as_slice() {
            self.meta.max_clustering.clone_from(&self.last_clustering);
        }
    }
}
