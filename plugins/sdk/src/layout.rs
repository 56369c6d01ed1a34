//! The byte layouts of WIT `types` contract 3-5: entries, rows, flush
//! records. Decoding validates every length, so corrupt input is an
//! `Error::Corrupt`, never a panic.

use crate::error::{Error, corrupt};

/// A memtable entry: a sort key, its timestamp, and the allocator's ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The byte-comparable sort key.
    pub key: &'a [u8],
    /// The write timestamp; the higher one wins.
    pub timestamp: u64,
    /// Where the row lives, as the allocator said.
    pub reference: u64,
}

impl<'a> Entry<'a> {
    /// Bytes before the key: timestamp and ref.
    pub const HEADER: usize = 16;

    /// Reads an entry record.
    pub fn decode(record: &'a [u8]) -> Result<Self, Error> {
        let mut r = Reader::new(record, "entry");
        let timestamp = r.u64()?;
        let reference = r.u64()?;
        Ok(Entry { key: r.rest(), timestamp, reference })
    }

    /// Appends the entry record to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_entry(out, self.key, self.timestamp, self.reference);
    }

    /// The size of the encoded record.
    pub fn encoded_len(&self) -> usize {
        Self::HEADER + self.key.len()
    }

    /// Overwrites the ref of an encoded entry in place (the host routes a
    /// batch before the allocator has handed out its refs). Fails on a
    /// record too short to be an entry.
    pub fn set_reference(record: &mut [u8], reference: u64) -> Result<(), Error> {
        match record.get_mut(8..Self::HEADER) {
            Some(field) => {
                field.copy_from_slice(&reference.to_le_bytes());
                Ok(())
            }
            None => Err(corrupt("entry shorter than its 16-byte header")),
        }
    }
}

fn encode_entry(out: &mut Vec<u8>, key: &[u8], timestamp: u64, reference: u64) {
    out.extend_from_slice(&timestamp.to_le_bytes());
    out.extend_from_slice(&reference.to_le_bytes());
    out.extend_from_slice(key);
}

/// One cell of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell<'a> {
    /// The column's index in the table.
    pub column: u16,
    /// The value's bytes.
    pub value: &'a [u8],
}

/// A validated row, borrowed from its encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowView<'a> {
    bytes: &'a [u8],
    /// The partition key.
    pub partition: &'a [u8],
    /// The clustering key.
    pub clustering: &'a [u8],
    /// The write timestamp.
    pub timestamp: u64,
    /// True for a row tombstone, which has no cells.
    pub tombstone: bool,
    cell_count: u16,
    cells: &'a [u8],
}

const TOMBSTONE: u8 = 1;

/// A row's fields up to its cell count: keys, timestamp and flags.
fn read_head<'a>(r: &mut Reader<'a>) -> Result<RowHead<'a>, Error> {
    let pk_len = r.u32()? as usize;
    let partition = r.take(pk_len)?;
    let ck_len = r.u32()? as usize;
    let clustering = r.take(ck_len)?;
    let timestamp = r.u64()?;
    let flags = r.u8()?;
    if flags & !TOMBSTONE != 0 {
        return Err(corrupt(format_args!("row has unknown flags {flags:#x}")));
    }
    Ok(RowHead { partition, clustering, timestamp, tombstone: flags & TOMBSTONE != 0 })
}

/// A row's keys, timestamp and tombstone flag (`RowView::head`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowHead<'a> {
    /// The partition key.
    pub partition: &'a [u8],
    /// The clustering key.
    pub clustering: &'a [u8],
    /// The write timestamp.
    pub timestamp: u64,
    /// True for a row tombstone.
    pub tombstone: bool,
}

impl<'a> RowView<'a> {
    /// Reads and validates a whole row record; trailing bytes are corrupt.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes, "row");
        let RowHead { partition, clustering, timestamp, tombstone } = read_head(&mut r)?;
        let cell_count = r.u16()?;
        let cells = r.rest();
        if tombstone && cell_count != 0 {
            return Err(corrupt("row tombstone carries cells"));
        }
        let view = RowView { bytes, partition, clustering, timestamp, tombstone, cell_count, cells };
        let mut seen = 0u16;
        let mut last_column = None;
        let mut walk = Reader::new(cells, "cell");
        while !walk.is_empty() {
            let column = walk.u16()?;
            let len = walk.u32()? as usize;
            walk.take(len)?;
            if last_column.is_some_and(|last| column <= last) {
                return Err(corrupt(format_args!("cell column {column} is out of order")));
            }
            last_column = Some(column);
            seen = seen.checked_add(1).ok_or_else(|| corrupt("too many cells"))?;
        }
        if seen != cell_count {
            return Err(corrupt(format_args!("row says {cell_count} cells but holds {seen}")));
        }
        Ok(view)
    }

    /// Reads a row record's keys, timestamp and tombstone flag, checking
    /// their bounds and the flags but not walking the cells.
    /// For rows already validated once (routing, replay, the flush audit).
    pub fn head(bytes: &'a [u8]) -> Result<RowHead<'a>, Error> {
        read_head(&mut Reader::new(bytes, "row"))
    }

    /// The encoded row, exactly as decoded.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// How many cells.
    pub fn cell_count(&self) -> u16 {
        self.cell_count
    }

    /// The cells in column order.
    pub fn cells(&self) -> Cells<'a> {
        Cells { rest: self.cells }
    }
}

/// The cells of a validated row.
#[derive(Debug, Clone)]
pub struct Cells<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Cells<'a> {
    type Item = Cell<'a>;

    fn next(&mut self) -> Option<Cell<'a>> {
        // The row was validated in `RowView::decode`.
        let mut r = Reader::new(self.rest, "cell");
        let column = r.u16().ok()?;
        let len = r.u32().ok()? as usize;
        let value = r.take(len).ok()?;
        self.rest = r.rest();
        Some(Cell { column, value })
    }
}

/// Appends a row record to `out`. Cells must be in ascending column order;
/// a tombstone takes no cells.
pub fn encode_row<'c>(out: &mut Vec<u8>, partition: &[u8], clustering: &[u8], timestamp: u64, tombstone: bool, cells: impl IntoIterator<Item = Cell<'c>>) {
    out.extend_from_slice(&len_u32(partition).to_le_bytes());
    out.extend_from_slice(partition);
    out.extend_from_slice(&len_u32(clustering).to_le_bytes());
    out.extend_from_slice(clustering);
    out.extend_from_slice(&timestamp.to_le_bytes());
    out.push(if tombstone { TOMBSTONE } else { 0 });
    let count_at = out.len();
    out.extend_from_slice(&0u16.to_le_bytes());
    let mut count = 0u16;
    for cell in cells {
        out.extend_from_slice(&cell.column.to_le_bytes());
        out.extend_from_slice(&len_u32(cell.value).to_le_bytes());
        out.extend_from_slice(cell.value);
        count = count.saturating_add(1);
    }
    out[count_at..count_at + 2].copy_from_slice(&count.to_le_bytes());
}

/// A serializer's input: a sort key and its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushRecord<'a> {
    /// The byte-comparable sort key.
    pub key: &'a [u8],
    /// The row.
    pub row: RowView<'a>,
}

impl<'a> FlushRecord<'a> {
    /// Reads and validates a flush record.
    pub fn decode(record: &'a [u8]) -> Result<Self, Error> {
        let mut r = Reader::new(record, "flush record");
        let key_len = r.u32()? as usize;
        let key = r.take(key_len)?;
        let row = RowView::decode(r.rest())?;
        Ok(FlushRecord { key, row })
    }
}

/// Appends a flush record (key plus an already encoded row) to `out`.
pub fn encode_flush_record(out: &mut Vec<u8>, key: &[u8], row: &[u8]) {
    out.extend_from_slice(&len_u32(key).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(row);
}

fn len_u32(bytes: &[u8]) -> u32 {
    // Keys and values are bounded far below 4 GiB by the host.
    u32::try_from(bytes.len()).unwrap_or(u32::MAX)
}

/// A bounds-checked little-endian reader.
struct Reader<'a> {
    rest: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn new(rest: &'a [u8], what: &'static str) -> Self {
        Reader { rest, what }
    }

    fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.rest.len() < n {
            return Err(self.short(n));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    // Out of line, so `take` stays small enough to inline on the hot path.
    #[cold]
    #[inline(never)]
    fn short(&self, n: usize) -> Error {
        corrupt(format_args!("{} needs {n} more bytes but has {}", self.what, self.rest.len()))
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let Some((head, tail)) = self.rest.split_first_chunk::<N>() else {
            return Err(self.short(N));
        };
        self.rest = tail;
        Ok(*head)
    }

    #[inline(always)]
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.array::<1>()?[0])
    }

    #[inline(always)]
    fn u16(&mut self) -> Result<u16, Error> {
        self.array().map(u16::from_le_bytes)
    }

    #[inline(always)]
    fn u32(&mut self) -> Result<u32, Error> {
        self.array().map(u32::from_le_bytes)
    }

    #[inline(always)]
    fn u64(&mut self) -> Result<u64, Error> {
        self.array().map(u64::from_le_bytes)
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_round_trips_and_rejects_truncation() {
        let mut out = Vec::new();
        let cells = [Cell { column: 0, value: b"a" }, Cell { column: 3, value: b"xyz" }];
        encode_row(&mut out, b"pk", b"ck", 7, false, cells);
        let row = RowView::decode(&out).expect("valid row");
        assert_eq!(row.partition, b"pk");
        assert_eq!(row.clustering, b"ck");
        assert_eq!(row.timestamp, 7);
        assert_eq!(row.cells().collect::<Vec<_>>(), cells);
        for cut in 0..out.len() {
            assert!(RowView::decode(&out[..cut]).is_err(), "truncated at {cut} must fail");
        }
    }
}
