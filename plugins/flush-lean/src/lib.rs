//! `lean`: the flush serializer after CASSANDRA-21083. Per-partition work
//! happens once per partition (the clustering bounds look only at each
//! partition's first and last row, since rows arrive in clustering order),
//! rows are copied verbatim into the caller's pre-sized buffer, and nothing
//! is allocated per row. Writes the same `rowfile` format as `naive`.

use memlab_sdk::{Error, Finished, FlushRecord, Params, SegmentMeta, Serializer, Stats};
use rowfile::{RowFileReader, RowFileWriter};

/// Writes one segment, the lean way.
#[derive(Debug, Default)]
pub struct LeanWriter {
    file: RowFileWriter,
    meta: SegmentMeta,
    partition: Vec<u8>,
    last_clustering: Vec<u8>,
}

impl LeanWriter {
    /// Folds the finished partition's last clustering into the bounds.
    fn close_partition(&mut self) {
        if self.meta.rows > 0 && self.last_clustering.as_slice() > self.meta.max_clustering.as_slice() {
            self.meta.max_clustering.clone_from(&self.last_clustering);
        }
    }
}

impl Serializer for LeanWriter {
    const NAME: &'static str = "lean";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Reader = RowFileReader;

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Self::default())
    }

    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        let row = record.row;
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
        self.file.append(record.key, row.as_bytes(), out);
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        self.close_partition();
        let (index, checksum) = self.file.finish(tail);
        let mut meta = std::mem::take(&mut self.meta);
        meta.checksum = checksum;
        Ok(Finished { index, meta })
    }

    fn stats(&self) -> Stats {
        vec![("rows".into(), self.meta.rows), ("bytes".into(), self.file.bytes())]
    }
}

memlab_sdk::export!(serializer: LeanWriter);
