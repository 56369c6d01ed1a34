//! `lean`: the flush serializer after CASSANDRA-21083. Per-partition work
//! happens once per partition (the clustering bounds look only at each
//! partition's first and last row, since rows arrive in clustering order),
//! rows are copied verbatim into the caller's pre-sized buffer, and nothing
//! is allocated per row. Writes the same `rowfile` format as `naive`.

use memlab_sdk::{Error, Finished, FlushRecord, Params, Serializer, Stats};
use rowfile::{RowFileReader, RowFileWriter, SortedMeta};

/// Writes one segment, the lean way.
#[derive(Debug, Default)]
pub struct LeanWriter {
    file: RowFileWriter,
    meta: SortedMeta,
}

impl Serializer for LeanWriter {
    const NAME: &'static str = "lean";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Reader = RowFileReader;

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Self::default())
    }

    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        self.meta.observe(&record.row);
        self.file.append(record.key, record.row.as_bytes(), out);
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let (index, checksum) = self.file.finish(tail);
        Ok(Finished { index, meta: self.meta.finish(checksum) })
    }

    fn stats(&self) -> Stats {
        vec![("rows".into(), self.meta.rows()), ("bytes".into(), self.file.bytes())]
    }
}

memlab_sdk::export!(serializer: LeanWriter);
