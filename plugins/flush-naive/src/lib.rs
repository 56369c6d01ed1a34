//! `naive`: the flush serializer before CASSANDRA-21083. Metadata is
//! updated per row (clustering bounds copied on every change, the
//! partition key copied per partition), and each row is re-encoded cell by
//! cell through a scratch buffer of its own. Writes the `rowfile` format.

use memlab_sdk::{Error, Finished, FlushRecord, Params, SegmentMeta, Serializer, Stats, encode_row};
use rowfile::{RowFileReader, RowFileWriter};

/// Writes one segment, the slow way.
#[derive(Debug, Default)]
pub struct NaiveWriter {
    file: RowFileWriter,
    meta: SegmentMeta,
    last_partition: Option<Vec<u8>>,
    scratch_buffers: u64,
}

impl Serializer for NaiveWriter {
    const NAME: &'static str = "naive";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Reader = RowFileReader;

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Self::default())
    }

    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        let row = record.row;
        let m = &mut self.meta;
        if m.rows == 0 || row.timestamp < m.min_timestamp {
            m.min_timestamp = row.timestamp;
        }
        if m.rows == 0 || row.timestamp > m.max_timestamp {
            m.max_timestamp = row.timestamp;
        }
        if m.rows == 0 || row.clustering < m.min_clustering.as_slice() {
            m.min_clustering = row.clustering.to_vec();
        }
        if m.rows == 0 || row.clustering > m.max_clustering.as_slice() {
            m.max_clustering = row.clustering.to_vec();
        }
        if self.last_partition.as_deref() != Some(row.partition) {
            m.partitions += 1;
            self.last_partition = Some(row.partition.to_vec());
        }
        m.tombstones += u64::from(row.tombstone);
        m.rows += 1;
        let mut scratch = Vec::new();
        encode_row(&mut scratch, row.partition, row.clustering, row.timestamp, row.tombstone, row.cells());
        self.scratch_buffers += 1;
        self.file.append(record.key, &scratch, out);
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let (index, checksum) = self.file.finish(tail);
        let mut meta = std::mem::take(&mut self.meta);
        meta.checksum = checksum;
        Ok(Finished { index, meta })
    }

    fn stats(&self) -> Stats {
        vec![("rows".into(), self.meta.rows), ("bytes".into(), self.file.bytes()), ("scratch-buffers".into(), self.scratch_buffers)]
    }
}

memlab_sdk::export!(serializer: NaiveWriter);
