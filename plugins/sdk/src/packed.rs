use crate::error::{Error, corrupt};

/// A batch of records back to back: the WIT `packed` record.
///
/// Record `i` is `data[ends[i-1]..ends[i]]`. A `Packed` built from parts is
/// validated once, so reading records never panics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed {
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl Packed {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `records` records of `bytes` in all.
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        Packed { data: Vec::with_capacity(bytes), ends: Vec::with_capacity(records) }
    }

    /// Checks that `ends` never decreases and stays within `data`.
    pub fn from_parts(data: Vec<u8>, ends: Vec<u32>) -> Result<Self, Error> {
        let mut prev = 0u32;
        for (i, &end) in ends.iter().enumerate() {
            if end < prev {
                return Err(corrupt(format_args!("packed end {i} ({end}) is before end {} ({prev})", i.wrapping_sub(1))));
            }
            prev = end;
        }
        if prev as usize > data.len() {
            return Err(corrupt(format_args!("packed ends reach {prev} but data has {} bytes", data.len())));
        }
        Ok(Packed { data, ends })
    }

    /// The raw parts, to hand across the boundary without copying.
    pub fn into_parts(self) -> (Vec<u8>, Vec<u32>) {
        (self.data, self.ends)
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes of record data in all.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Record `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.data.get(start..end)
    }

    /// The records in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |&end| {
            let end = end as usize;
            let rec = &self.data[start..end];
            start = end;
            rec
        })
    }

    /// Appends one record.
    pub fn push(&mut self, record: &[u8]) {
        self.data.extend_from_slice(record);
        self.close_record();
    }

    /// Appends one record written in place by `write`.
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(&mut self.data);
        self.close_record();
    }

    /// Removes every record, keeping the buffers.
    pub fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    /// Visits each record mutably, in order, for patching fixed-width
    /// fields in place.
    pub fn for_each_mut(&mut self, mut visit: impl FnMut(usize, &mut [u8])) {
        let mut start = 0usize;
        for (i, &end) in self.ends.iter().enumerate() {
            visit(i, &mut self.data[start..end as usize]);
            start = end as usize;
        }
    }

    fn close_record(&mut self) {
        // Batches are far below 4 GiB: the host caps a call's size.
        let end = u32::try_from(self.data.len()).unwrap_or(u32::MAX);
        self.ends.push(end);
    }
}
