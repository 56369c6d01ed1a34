use crate::{Error, Packed, Params, Pool, RowView, Stats, reserve_rows};

/// Rows bump-allocated into chunks, each row behind its `u32` length,
/// with the pool reservations made for them counted. A ref is
/// `chunk << 32 | offset`. Chunks never move once created, so a ref stays
/// valid for the store's life. Shared by the bundled allocators; yours
/// may use it too.
#[derive(Debug)]
pub struct ChunkStore {
    chunk_size: usize,
    chunks: Vec<Vec<u8>>,
    /// The chunk rows of up to `chunk_size` bytes go to. A larger row gets
    /// a chunk of its own and leaves this one current, so that its tail is
    /// not abandoned (unreserved memory a reserve-per-row allocator would
    /// hold without the pool knowing).
    current: Option<usize>,
    used: u64,
    reserved: u64,
    reservations: u64,
    // Reused across batches by `store_batch`.
    sizes: Vec<u64>,
}

const LEN_PREFIX: usize = 4;

impl ChunkStore {
    /// Chunks of `chunk_size` bytes; a larger row gets a chunk of its own.
    pub fn new(chunk_size: usize) -> Self {
        ChunkStore { chunk_size, chunks: Vec::new(), current: None, used: 0, reserved: 0, reservations: 0, sizes: Vec::new() }
    }

    /// A store whose chunk size is the parameter `name` (default
    /// `default`), refused outside `range`.
    pub fn from_param(params: &mut Params, name: &str, default: usize, range: std::ops::RangeInclusive<usize>) -> Result<Self, Error> {
        let size: usize = params.get(name, default)?;
        if !range.contains(&size) {
            return Err(Error::BadParam(format!("`{name}` = {size} is outside {}..={}", range.start(), range.end())));
        }
        Ok(ChunkStore::new(size))
    }

    /// Reserves `bytes` from `pool` with one call, and counts it.
    pub fn reserve(&mut self, pool: &mut dyn Pool, bytes: u64) -> Result<(), Error> {
        pool.reserve(bytes)?;
        self.reserved += bytes;
        self.reservations += 1;
        Ok(())
    }

    /// Stores a batch with one crossing into the host (`reserve_rows`):
    /// still one pool operation per reservation `store` would make. On
    /// refusal nothing of the batch is kept.
    pub fn store_batch(
        &mut self,
        pool: &mut dyn Pool,
        rows: &Packed,
        refs: &mut Vec<u64>,
        reservations: impl FnMut(&RowView<'_>, &mut Vec<u64>),
    ) -> Result<(), Error> {
        reserve_rows(pool, rows, &mut self.sizes, reservations)?;
        self.reserved += self.sizes.iter().sum::<u64>();
        self.reservations += self.sizes.len() as u64;
        for record in rows.iter() {
            refs.push(self.push(record));
        }
        Ok(())
    }

    /// Bytes a row of `len` bytes takes, prefix included.
    pub fn footprint(len: usize) -> usize {
        LEN_PREFIX + len
    }

    /// The capacity of the chunk that storing `len` bytes would open, or
    /// `None` when the row fits the current chunk.
    pub fn next_chunk(&self, len: usize) -> Option<usize> {
        let need = Self::footprint(len);
        if need > self.chunk_size {
            return Some(need);
        }
        let fits = self.current.and_then(|i| self.chunks.get(i)).is_some_and(|c| c.capacity() - c.len() >= need);
        (!fits).then_some(self.chunk_size)
    }

    /// Stores `row` and returns its ref.
    pub fn push(&mut self, row: &[u8]) -> u64 {
        let index = match self.next_chunk(row.len()) {
            Some(capacity) => {
                self.chunks.push(Vec::with_capacity(capacity));
                let index = self.chunks.len() - 1;
                if Self::footprint(row.len()) <= self.chunk_size {
                    self.current = Some(index);
                }
                index
            }
            // `next_chunk` found room in the current chunk.
            None => self.current.unwrap_or(0),
        };
        let chunk = &mut self.chunks[index];
        let offset = chunk.len();
        // Rows are far below 4 GiB: the host bounds batch sizes.
        chunk.extend_from_slice(&u32::try_from(row.len()).unwrap_or(u32::MAX).to_le_bytes());
        chunk.extend_from_slice(row);
        self.used += Self::footprint(row.len()) as u64;
        ((index as u64) << 32) | offset as u64
    }

    /// The row behind `reference`.
    pub fn get(&self, reference: u64) -> Result<&[u8], Error> {
        let bad = || Error::Corrupt(format!("ref {reference:#x} was not returned by this allocator"));
        let chunk = self.chunks.get((reference >> 32) as usize).ok_or_else(bad)?;
        let offset = (reference & 0xffff_ffff) as usize;
        let prefix = chunk.get(offset..offset + LEN_PREFIX).ok_or_else(bad)?;
        let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        let start = offset + LEN_PREFIX;
        chunk.get(start..start + len).ok_or_else(bad)
    }

    /// Chunks opened.
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Bytes of rows and prefixes stored.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The allocator counters of WIT `allocator` contract 4.
    pub fn stats(&self) -> Stats {
        vec![
            crate::Stat::BytesUsed.with(self.used),
            crate::Stat::BytesReserved.with(self.reserved),
            crate::Stat::Regions.with(self.chunks.len() as u64),
            crate::Stat::Reservations.with(self.reservations),
            crate::Stat::Waste.with(self.reserved.saturating_sub(self.used)),
        ]
    }

    /// Bytes of chunk capacity held.
    pub fn capacity(&self) -> u64 {
        self.chunks.iter().map(|c| c.capacity() as u64).sum()
    }
}
