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

    /// The wire form, one list across the boundary (types contract 1): the
    /// records back to back, each record's end as a `u32`, then the count
    /// as a `u32`, all little-endian.
    pub fn into_wire(mut self) -> Vec<u8> {
        self.append_trailer();
        self.data
    }

    /// Reads the wire form, checking its layout in the same pass.
    pub fn from_wire(mut wire: Vec<u8>) -> Result<Self, Error> {
        let mut ends = Vec::new();
        let records = read_trailer(&wire, &mut ends)?;
        wire.truncate(records);
        Ok(Packed { data: wire, ends })
    }

    /// Reads the wire form into this batch's own buffers, checking its
    /// layout: a reused batch allocates nothing once it has grown.
    pub fn copy_from_wire(&mut self, wire: &[u8]) -> Result<(), Error> {
        self.clear();
        let records = read_trailer(wire, &mut self.ends)?;
        grow_empty(&mut self.data, records);
        self.data.extend_from_slice(&wire[..records]);
        Ok(())
    }

    /// Appends the trailer in place and gives the wire form, for an
    /// answer that must outlive the call (the native table's). The batch
    /// is sealed: clear it before reading or growing it again.
    #[doc(hidden)]
    pub fn seal(&mut self) -> &[u8] {
        self.append_trailer();
        &self.data
    }

    /// Lends the wire form to `f` without copying the records: the trailer
    /// goes on for the call and comes off after it. A `Vec`, as the
    /// generated bindings take a `packed`.
    pub fn with_wire<R>(&mut self, f: impl FnOnce(&Vec<u8>) -> R) -> R {
        let len = self.data.len();
        self.append_trailer();
        let result = f(&self.data);
        self.data.truncate(len);
        result
    }

    fn append_trailer(&mut self) {
        let count = u32::try_from(self.ends.len()).unwrap_or(u32::MAX);
        self.data.reserve(4 * self.ends.len() + 4);
        for end in &self.ends {
            self.data.extend_from_slice(&end.to_le_bytes());
        }
        self.data.extend_from_slice(&count.to_le_bytes());
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

    /// Appends `from`'s records `records` (none past its last), in one
    /// copy of their bytes.
    pub fn extend_from(&mut self, from: &Packed, records: std::ops::Range<usize>) {
        let (first, last) = (records.start.min(from.len()), records.end.min(from.len()));
        if first >= last {
            return;
        }
        let start = if first == 0 { 0 } else { from.ends[first - 1] as usize };
        let end = from.ends[last - 1] as usize;
        let base = self.data.len();
        self.data.extend_from_slice(&from.data[start..end]);
        // Batches are far below 4 GiB, as in `close_record`.
        self.ends.extend(from.ends[first..last].iter().map(|&e| u32::try_from(e as usize - start + base).unwrap_or(u32::MAX)));
    }

    /// Appends one record written in place by `write`.
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(&mut self.data);
        self.close_record();
    }

    /// Keeps the first `records` records, dropping the rest.
    pub fn truncate(&mut self, records: usize) {
        if records < self.ends.len() {
            self.ends.truncate(records);
            self.data.truncate(self.ends.last().map_or(0, |&e| e as usize));
        }
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

/// Makes room for `len` bytes in an empty `buf` without `realloc`, which
/// would copy its old bytes.
fn grow_empty(buf: &mut Vec<u8>, len: usize) {
    if buf.capacity() < len {
        *buf = Vec::with_capacity(len);
    }
}

/// Checks a wire form's trailer, pushing each record's end onto `ends`
/// (emptied on error); the length of its record bytes.
/// The records of a wire form, read where they lie: only their ends are
/// kept, in the caller's reused `ends`, so a native table's call reads a
/// lent batch without copying its records.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn wire_records<'w>(wire: &'w [u8], ends: &'w mut Vec<u32>) -> Result<impl Iterator<Item = &'w [u8]> + 'w, Error> {
    read_trailer(wire, ends)?;
    let ends: &'w Vec<u32> = ends;
    let mut start = 0usize;
    Ok(ends.iter().map(move |&end| {
        let record = &wire[start..end as usize];
        start = end as usize;
        record
    }))
}

fn read_trailer(wire: &[u8], ends: &mut Vec<u32>) -> Result<usize, Error> {
    let Some(count_at) = wire.len().checked_sub(4) else {
        return Err(corrupt(format_args!("a packed batch of {} bytes has no record count", wire.len())));
    };
    let count = u32::from_le_bytes(wire[count_at..].try_into().unwrap_or_default()) as usize;
    let Some(ends_at) = count.checked_mul(4).and_then(|bytes| count_at.checked_sub(bytes)) else {
        return Err(corrupt(format_args!("a packed batch of {} bytes claims {count} records", wire.len())));
    };
    ends.clear();
    ends.reserve(count);
    let mut prev = 0u32;
    for (i, bytes) in wire[ends_at..count_at].chunks_exact(4).enumerate() {
        let end = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if end < prev || end as usize > ends_at {
            ends.clear();
            return Err(corrupt(format_args!("packed end {i} ({end}) is before the one before it ({prev}) or past the {ends_at} record bytes")));
        }
        prev = end;
        ends.push(end);
    }
    Ok(ends_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_from_appends_the_records_of_a_range() {
        let mut from = Packed::new();
        for r in [&b"a"[..], b"bcd", b"", b"ef"] {
            from.push(r);
        }
        let mut to = Packed::new();
        to.push(b"x");
        to.extend_from(&from, 1..3);
        to.extend_from(&from, 3..9);
        to.extend_from(&from, 2..2);
        assert_eq!(to.iter().collect::<Vec<_>>(), [&b"x"[..], b"bcd", b"", b"ef"]);
    }

    fn batch(records: &[&[u8]]) -> Packed {
        let mut p = Packed::new();
        records.iter().for_each(|r| p.push(r));
        p
    }

    #[test]
    fn the_wire_form_round_trips_and_lending_restores_the_batch() {
        for records in [&[][..], &[&b""[..]][..], &[&b"a"[..], b"", b"bcd"][..]] {
            let mut p = batch(records);
            let lent = p.with_wire(|wire| wire.to_vec());
            let mut ends = vec![7];
            let in_place: Vec<Vec<u8>> = wire_records(&lent, &mut ends).expect("valid").map(<[u8]>::to_vec).collect();
            assert_eq!(in_place, records.iter().map(|r| r.to_vec()).collect::<Vec<_>>(), "read where they lie");
            assert_eq!(p.iter().collect::<Vec<_>>(), records);
            assert_eq!(p.data_len(), records.iter().map(|r| r.len()).sum::<usize>());
            let back = Packed::from_wire(lent).expect("valid");
            assert_eq!(back.iter().collect::<Vec<_>>(), records);
            let mut copied = batch(&[b"stale", b"records"]);
            copied.copy_from_wire(&p.clone().into_wire()).expect("valid");
            assert_eq!(copied, p, "a copy over a used batch is the batch");
            assert_eq!(p.clone().seal(), &p.clone().into_wire()[..], "sealed is the wire form");
            assert_eq!(Packed::from_wire(p.into_wire()).expect("valid").len(), records.len());
        }
    }

    #[test]
    fn a_damaged_wire_form_is_corrupt() {
        let wire = batch(&[b"ab", b"c"]).into_wire();
        for bad in [
            vec![],
            vec![1, 0, 0],
            vec![1, 0, 0, 0],
            u32::MAX.to_le_bytes().to_vec(),
            // Ends that decrease, or reach past the records.
            [&b"ab"[..], &2u32.to_le_bytes(), &1u32.to_le_bytes(), &2u32.to_le_bytes()].concat(),
            [&b"ab"[..], &9u32.to_le_bytes(), &1u32.to_le_bytes()].concat(),
            wire[1..].to_vec(),
        ] {
            assert!(matches!(Packed::from_wire(bad.clone()), Err(Error::Corrupt(_))), "{bad:?}");
            let mut reused = batch(&[b"x"]);
            assert!(matches!(reused.copy_from_wire(&bad), Err(Error::Corrupt(_))) && reused.is_empty(), "{bad:?}");
        }
    }
}
