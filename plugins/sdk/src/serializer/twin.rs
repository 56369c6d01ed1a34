//! The serializer's writer and reader instances, as the export glue and
//! the host's native twins drive them.

use crate::params::construct;
use crate::{Description, Error, Finished, FlushRecord, Packed, Params, SegmentReader, Serializer, Stats};

/// A serializer's writer, unusable once finished.
pub struct WriterInstance<S: Serializer> {
    writer: Option<S>,
    description: Description,
    /// The SDK's heap count at `create` (wasm only).
    heap_at_create: Option<u64>,
    /// The writer's last counters, kept past `finish`.
    finished: Stats,
}

impl<S: Serializer> WriterInstance<S> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let heap_at_create = crate::heap::allocated();
        let (writer, description) = construct(S::NAME, S::VERSION, params, S::create)?;
        Ok(WriterInstance { writer: Some(writer), description, heap_at_create, finished: Stats::new() })
    }

    fn writer(&mut self) -> Result<&mut S, Error> {
        self.writer.as_mut().ok_or_else(|| Error::InvalidState("writer already finished".into()))
    }

    /// Encodes a batch of flush records, appending to `out`.
    pub fn write(&mut self, records: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        self.write_each(records.iter(), out)
    }

    /// `write`, over records wherever they lie.
    pub fn write_each<'r>(&mut self, records: impl Iterator<Item = &'r [u8]>, out: &mut Vec<u8>) -> Result<(), Error> {
        let writer = self.writer()?;
        for record in records {
            writer.write(FlushRecord::decode(record)?, out)?;
        }
        Ok(())
    }

    /// Ends the segment, appending the data file's tail to `tail`.
    pub fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let writer = self.writer()?;
        let before = writer.stats();
        let finished = writer.finish(tail);
        // The host asks for the counters after `finish`: they include it.
        // A writer's counters only grow over its life, so one that starts
        // over in `finish` keeps its value from before.
        let mut after = writer.stats();
        for (name, value) in before {
            match after.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => *v = (*v).max(value),
                None => after.push((name, value)),
            }
        }
        self.finished = after;
        self.writer = None;
        finished
    }

    /// What `create` applied.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The writer's counters (as `finish` left them, once finished) and,
    /// in wasm, the SDK's count of what the instance allocated since
    /// `create`.
    pub fn stats(&self) -> Stats {
        let mut stats = self.writer.as_ref().map_or_else(|| self.finished.clone(), Serializer::stats);
        if let (Some(at), Some(now)) = (self.heap_at_create, crate::heap::allocated()) {
            stats.retain(|(name, _)| name != crate::heap::STAT);
            stats.push((crate::heap::STAT.into(), now.wrapping_sub(at)));
        }
        stats
    }
}

/// A segment reader.
pub struct ReaderInstance<R: SegmentReader> {
    reader: R,
}

impl<R: SegmentReader> ReaderInstance<R> {
    /// Opens a segment; parameters as the writer took them.
    pub fn open(params: Vec<(String, String)>, data: Vec<u8>, index: Vec<u8>) -> Result<Self, Error> {
        let mut params = Params::new(params);
        let reader = R::open(&mut params, data, index)?;
        params.finish()?;
        Ok(ReaderInstance { reader })
    }

    /// The next records in written order, up to `max_bytes`.
    pub fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        self.reader.next(max_bytes as usize, out)
    }

    /// One record per key: the flush record, or empty for a miss.
    pub fn get(&self, keys: &Packed, out: &mut Packed) -> Result<(), Error> {
        for key in keys.iter() {
            self.reader.get(key, out)?;
        }
        Ok(())
    }
}
