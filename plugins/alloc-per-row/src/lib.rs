//! `per-row`: rows are bump-allocated in chunks, and each row is reserved
//! from the host pool with one call, sized once — the allocation batching
//! of CASSANDRA-20226.

use memlab_sdk::{Allocator, Error, Params, Pool, RowView, Stats};

/// A chunked bump allocator with one pool reservation per row.
#[derive(Debug)]
pub struct PerRowAllocator {
    chunk_size: usize,
    chunks: Vec<Vec<u8>>,
    used: u64,
    reserved: u64,
    reservations: u64,
}

// Each row is stored behind its length.
const LEN_PREFIX: usize = 4;

impl PerRowAllocator {
    fn chunk_for(&mut self, need: usize) -> (usize, &mut Vec<u8>) {
        let fits = self.chunks.last().is_some_and(|c| c.capacity() - c.len() >= need);
        if !fits {
            self.chunks.push(Vec::with_capacity(need.max(self.chunk_size)));
        }
        let index = self.chunks.len() - 1;
        (index, &mut self.chunks[index])
    }
}

impl Allocator for PerRowAllocator {
    const NAME: &'static str = "per-row";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        let chunk_size: usize = params.get("chunk_size", 1 << 20)?;
        if chunk_size < 64 {
            return Err(Error::BadParam(format!("`chunk_size` = {chunk_size} is below 64")));
        }
        Ok(PerRowAllocator { chunk_size, chunks: Vec::new(), used: 0, reserved: 0, reservations: 0 })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        let bytes = row.as_bytes();
        let need = LEN_PREFIX + bytes.len();
        pool.reserve(need as u64)?;
        self.reserved += need as u64;
        self.reservations += 1;
        self.used += need as u64;
        let (index, chunk) = self.chunk_for(need);
        let offset = chunk.len();
        chunk.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        chunk.extend_from_slice(bytes);
        Ok(((index as u64) << 32) | offset as u64)
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        let bad = || Error::Corrupt(format!("ref {reference:#x} was not returned by this allocator"));
        let chunk = self.chunks.get((reference >> 32) as usize).ok_or_else(bad)?;
        let offset = (reference & 0xffff_ffff) as usize;
        let prefix = chunk.get(offset..offset + LEN_PREFIX).ok_or_else(bad)?;
        let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        let start = offset + LEN_PREFIX;
        chunk.get(start..start + len).ok_or_else(bad)
    }

    fn stats(&self) -> Stats {
        vec![
            ("bytes-used".into(), self.used),
            ("bytes-reserved".into(), self.reserved),
            ("regions".into(), self.chunks.len() as u64),
            ("reservations".into(), self.reservations),
            ("waste".into(), self.reserved - self.used),
        ]
    }
}

memlab_sdk::export!(allocator: PerRowAllocator);
