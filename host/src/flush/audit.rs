//! What the host checks of a flush on its own account, for wasm and
//! native strategies alike: each row the allocator loads is the row its
//! entry points at, and the serializer's segment metadata is what the
//! host works out from the rows it handed over.

use memlab_sdk::{Entry, RowHead, RowView, SegmentMeta};

use crate::router::{sort_key, token};
use crate::seam::show_key;

/// Checks each loaded row against its entry: same sort key, same
/// timestamp. A mismatch is an allocator that handed out a ref aliasing
/// another row. Rows come in key order, so a partition's rows share the
/// key's prefix (token, partition), worked out once per partition.
#[derive(Debug, Default)]
pub(crate) struct RowAudit {
    partition: Vec<u8>,
    prefix: Vec<u8>,
    started: bool,
}

impl RowAudit {
    pub(crate) fn check<'r>(&mut self, entry: &Entry<'_>, row: &'r [u8]) -> Result<RowHead<'r>, String> {
        let head = RowView::head(row).map_err(|e| format!("for ref {} it loaded bytes that are not a row: {e}", entry.reference))?;
        if !self.started || head.partition != self.partition.as_slice() {
            self.started = true;
            self.partition.clear();
            self.partition.extend_from_slice(head.partition);
            self.prefix.clear();
            sort_key(token(head.partition), head.partition, &[], &mut self.prefix);
        }
        let p = self.prefix.len();
        let same_key = entry.key.len() == p + head.clustering.len() && entry.key[..p] == self.prefix[..] && entry.key[p..] == *head.clustering;
        if !same_key || head.timestamp != entry.timestamp {
            let mut key = self.prefix.clone();
            key.extend_from_slice(head.clustering);
            return Err(format!(
                "for ref {} it loaded the row of key {} at timestamp {}, but the entry holding that ref has key {} at timestamp {} (refs alias)",
                entry.reference,
                show_key(&key),
                head.timestamp,
                show_key(entry.key),
                entry.timestamp
            ));
        }
        Ok(head)
    }
}

/// The segment metadata of the rows handed to a serializer, in order.
#[derive(Debug, Default)]
pub(crate) struct MetaTally {
    meta: SegmentMeta,
    partition: Vec<u8>,
}

impl MetaTally {
    /// Accounts one row; rows come in key order, so a partition's rows
    /// are contiguous.
    pub(crate) fn observe(&mut self, row: &RowHead<'_>) {
        let m = &mut self.meta;
        if m.rows == 0 || row.partition != self.partition.as_slice() {
            m.partitions += 1;
            self.partition.clear();
            self.partition.extend_from_slice(row.partition);
        }
        if m.rows == 0 || row.clustering < m.min_clustering.as_slice() {
            m.min_clustering.clear();
            m.min_clustering.extend_from_slice(row.clustering);
        }
        if m.rows == 0 || row.clustering > m.max_clustering.as_slice() {
            m.max_clustering.clear();
            m.max_clustering.extend_from_slice(row.clustering);
        }
        m.min_timestamp = if m.rows == 0 { row.timestamp } else { m.min_timestamp.min(row.timestamp) };
        m.max_timestamp = m.max_timestamp.max(row.timestamp);
        m.tombstones += u64::from(row.tombstone);
        m.rows += 1;
    }

    /// The first field where `given` differs from what the host counted.
    pub(crate) fn compare(&self, given: &SegmentMeta) -> Result<(), String> {
        let (want, got) = (&self.meta, given);
        let numbers = [
            ("rows", want.rows, got.rows),
            ("partitions", want.partitions, got.partitions),
            ("tombstones", want.tombstones, got.tombstones),
            ("min-timestamp", want.min_timestamp, got.min_timestamp),
            ("max-timestamp", want.max_timestamp, got.max_timestamp),
        ];
        if let Some((field, want, got)) = numbers.into_iter().find(|(_, w, g)| w != g) {
            return Err(format!("its metadata says {field} = {got}, but it was given rows with {field} = {want}"));
        }
        for (field, want, got) in [("min-clustering", &want.min_clustering, &got.min_clustering), ("max-clustering", &want.max_clustering, &got.max_clustering)]
        {
            if want != got {
                return Err(format!("its metadata says {field} = {}, but it was given rows with {field} = {}", show_key(got), show_key(want)));
            }
        }
        Ok(())
    }
}
