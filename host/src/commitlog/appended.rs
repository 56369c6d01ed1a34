//! What the host handed each log segment, kept to read it back against:
//! each row's hash (keyed by the per-process secret) and each record's
//! end.

/// What the host appended to one log segment.
#[derive(Debug, Clone, Default)]
pub struct Appended {
    /// Each row's hash, in order.
    pub rows: Vec<u64>,
    /// Each appended record's end offset, and the rows up to it.
    pub records: Vec<(u64, u64)>,
}

impl Appended {
    /// Notes one record of `rows` (their hashes) ending at `end`.
    pub fn note(&mut self, rows: impl IntoIterator<Item = u64>, end: u64) {
        self.rows.extend(rows);
        self.records.push((end, self.rows.len() as u64));
    }

    /// Bytes appended.
    pub fn len(&self) -> u64 {
        self.records.last().map_or(0, |r| r.0)
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Rows of the records that end at or before `offset`.
    pub fn rows_before(&self, offset: u64) -> u64 {
        self.records.iter().take_while(|(end, _)| *end <= offset).last().map_or(0, |r| r.1)
    }
}
