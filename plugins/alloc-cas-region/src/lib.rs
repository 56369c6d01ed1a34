//! `cas-region`: Cassandra's `NativeAllocator` for many writers at once.
//! Rows are carved out of the current region by an atomic bump of its
//! offset, without a lock; a writer that finds the region full opens the
//! next one. The pool is asked as the `reserve` parameter says:
//! - `cell`: once for each cell and once for the rest of the row, the
//!   shape before CASSANDRA-20226's allocation batching;
//! - `row`: once a row (the ticket's batching);
//! - `region`: once a region, as the `region` allocator does.
//!
//! Opening a region takes a lock: Cassandra installs it with a CAS and
//! keeps a loser's region for later, which saves the lock but not the
//! allocation. A region opens once in `region_size` bytes (1 MiB), so
//! the lock is off the per-row path either way.

#![expect(unsafe_code, reason = "writers copy rows into disjoint ranges of a shared region")]

use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use memlab_sdk::{ConcurrentAllocator, Error, Packed, Params, Pool, RowView, Stat, Stats, reserve_rows};

/// Bytes before each row: its length.
const LEN_PREFIX: usize = 4;

/// What one pool reservation covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reserve {
    Cell,
    Row,
    Region,
}

/// A region: bytes, and how far writers have claimed them.
struct Region {
    bytes: Box<[UnsafeCell<u8>]>,
    claimed: AtomicUsize,
}

// SAFETY: a writer writes only the range its `fetch_add` on `claimed`
// gave it, which no other writer is given; a range is read (`load`) only
// through the ref its store returned, after that store completed.
unsafe impl Sync for Region {}

impl Region {
    fn new(size: usize) -> Region {
        let zeroed = vec![0u8; size].into_boxed_slice();
        // SAFETY: `UnsafeCell<u8>` is `repr(transparent)` over `u8`, so
        // the slice's layout is the same.
        let bytes = unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [UnsafeCell<u8>]) };
        Region { bytes, claimed: AtomicUsize::new(0) }
    }

    /// Claims `len` bytes: their offset, or `None` when they do not fit.
    fn claim(&self, len: usize) -> Option<usize> {
        let at = self.claimed.fetch_add(len, Ordering::Relaxed);
        (at + len <= self.bytes.len()).then_some(at)
    }

    /// Writes `row` behind its length at `at`, a range this writer claimed.
    fn write(&self, at: usize, row: &[u8]) {
        let range = &self.bytes[at..at + LEN_PREFIX + row.len()];
        let dst = UnsafeCell::raw_get(range.as_ptr());
        // SAFETY: the range is in bounds (sliced above) and this writer's
        // alone (`claim`); the sources are the caller's own bytes.
        unsafe {
            std::ptr::copy_nonoverlapping((row.len() as u32).to_le_bytes().as_ptr(), dst, LEN_PREFIX);
            std::ptr::copy_nonoverlapping(row.as_ptr(), dst.add(LEN_PREFIX), row.len());
        }
    }

    /// The `len` bytes at `at`, if in bounds.
    fn read(&self, at: usize, len: usize) -> Option<&[u8]> {
        let range = self.bytes.get(at..at.checked_add(len)?)?;
        // SAFETY: a stored row's bytes are written once, before its ref is
        // handed out, and never again (module comment on `Sync`).
        Some(unsafe { std::slice::from_raw_parts(UnsafeCell::raw_get(range.as_ptr()), len) })
    }
}

/// The concurrent region allocator.
pub struct CasRegion {
    region_size: usize,
    reserve: Reserve,
    regions: boxcar::Vec<Region>,
    /// The current region's index plus one; 0 before the first.
    current: AtomicUsize,
    opening: Mutex<()>,
    used: AtomicU64,
    reserved: AtomicU64,
    reservations: AtomicU64,
}

fn reference(region: usize, at: usize) -> u64 {
    ((region as u64) << 32) | at as u64
}

impl CasRegion {
    /// The sizes this row's reservations ask for, by `reserve`.
    fn sizes(&self, row: &RowView<'_>, sizes: &mut Vec<u64>) {
        let total = (LEN_PREFIX + row.as_bytes().len()) as u64;
        if self.reserve == Reserve::Cell {
            let mut cells = 0;
            for cell in row.cells() {
                let bytes = 6 + cell.value.len() as u64;
                sizes.push(bytes);
                cells += bytes;
            }
            sizes.push(total - cells);
        } else {
            sizes.push(total);
        }
    }

    /// Reserves `bytes` at once, counted.
    fn reserve_now(&self, pool: &mut dyn Pool, bytes: u64) -> Result<(), Error> {
        pool.reserve(bytes)?;
        self.reserved.fetch_add(bytes, Ordering::Relaxed);
        self.reservations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Opens a region of `size` (reserved now in `region` mode); its index.
    fn open(&self, pool: &mut dyn Pool, size: usize) -> Result<usize, Error> {
        if self.reserve == Reserve::Region {
            self.reserve_now(pool, size as u64)?;
        }
        Ok(self.regions.push(Region::new(size)))
    }

    /// Places a row whose reservations are made: its ref.
    fn place(&self, pool: &mut dyn Pool, row: &[u8]) -> Result<u64, Error> {
        let len = LEN_PREFIX + row.len();
        let (index, at) = if len > self.region_size {
            // A row larger than a region gets one of its own.
            let index = self.open(pool, len)?;
            (index, self.regions[index].claim(len).ok_or_else(|| Error::Other("a fresh region refused its row".into()))?)
        } else {
            self.claim(pool, len)?
        };
        self.regions[index].write(at, row);
        self.used.fetch_add(len as u64, Ordering::Relaxed);
        Ok(reference(index, at))
    }

    /// Claims `len` bytes of the current region, opening the next when it is full.
    fn claim(&self, pool: &mut dyn Pool, len: usize) -> Result<(usize, usize), Error> {
        loop {
            let seen = self.current.load(Ordering::Acquire);
            if let Some(at) = seen.checked_sub(1).and_then(|i| self.regions[i].claim(len)) {
                return Ok((seen - 1, at));
            }
            let _opening = self.opening.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Another writer may have opened one while this one waited.
            if self.current.load(Ordering::Acquire) == seen {
                let index = self.open(pool, self.region_size)?;
                self.current.store(index + 1, Ordering::Release);
            }
        }
    }
}

impl ConcurrentAllocator for CasRegion {
    const NAME: &'static str = "cas-region";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        let region_size: usize = params.get("region_size", 1 << 20)?;
        if !(4096..=1 << 30).contains(&region_size) {
            return Err(Error::BadParam(format!("`region_size` = {region_size} is outside 4096..=1073741824")));
        }
        let reserve = match params.get("reserve", "row".to_string())?.as_str() {
            "cell" => Reserve::Cell,
            "row" => Reserve::Row,
            "region" => Reserve::Region,
            other => return Err(Error::BadParam(format!("`reserve` = {other:?}: expected \"cell\", \"row\" or \"region\""))),
        };
        Ok(CasRegion {
            region_size,
            reserve,
            regions: boxcar::Vec::new(),
            current: AtomicUsize::new(0),
            opening: Mutex::new(()),
            used: AtomicU64::new(0),
            reserved: AtomicU64::new(0),
            reservations: AtomicU64::new(0),
        })
    }

    fn store(&self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        let mut rows = Packed::new();
        rows.push(row.as_bytes());
        let mut refs = Vec::with_capacity(1);
        self.store_batch(pool, &rows, &mut refs)?;
        refs.pop().ok_or_else(|| Error::Other("a stored row without its ref".into()))
    }

    fn store_batch(&self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        if self.reserve != Reserve::Region {
            // Every reservation of the batch in one crossing into the host.
            let mut sizes = Vec::with_capacity(rows.len() * 2);
            reserve_rows(pool, rows, &mut sizes, |row, sizes| self.sizes(row, sizes))?;
            self.reserved.fetch_add(sizes.iter().sum(), Ordering::Relaxed);
            self.reservations.fetch_add(sizes.len() as u64, Ordering::Relaxed);
        }
        for row in rows.iter() {
            refs.push(self.place(pool, row)?);
        }
        Ok(())
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        let bad = || Error::Corrupt(format!("ref {reference:#x} is not one this allocator returned"));
        let region = self.regions.get((reference >> 32) as usize).ok_or_else(bad)?;
        let at = reference as u32 as usize;
        let len = region.read(at, LEN_PREFIX).ok_or_else(bad)?;
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        region.read(at + LEN_PREFIX, len).ok_or_else(bad)
    }

    fn stats(&self) -> Stats {
        let (used, reserved) = (self.used.load(Ordering::Relaxed), self.reserved.load(Ordering::Relaxed));
        vec![
            Stat::BytesUsed.with(used),
            Stat::BytesReserved.with(reserved),
            Stat::Regions.with(self.regions.count() as u64),
            Stat::Reservations.with(self.reservations.load(Ordering::Relaxed)),
            Stat::Waste.with(reserved.saturating_sub(used)),
        ]
    }
}

memlab_sdk::export!(concurrent allocator: CasRegion);

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool that grants everything and counts it.
    struct Counted(u64);

    impl Pool for Counted {
        fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
            self.0 += bytes;
            Ok(())
        }

        fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
            self.0 += sizes.iter().sum::<u64>();
            Ok(())
        }

        fn release(&mut self, bytes: u64) {
            self.0 -= bytes;
        }
    }

    #[test]
    fn racing_writers_each_load_back_their_own_bytes() {
        for reserve in ["cell", "row", "region"] {
            let mut params = Params::new(vec![("region_size".into(), "4096".into()), ("reserve".into(), reserve.into())]);
            let arena = CasRegion::create(&mut params).expect("create");
            let stored: Vec<(Vec<u8>, u64, u64)> = std::thread::scope(|s| {
                let writers: Vec<_> = (0..4u64)
                    .map(|t| {
                        let arena = &arena;
                        s.spawn(move || {
                            let mut pool = Counted(0);
                            let mut kept = Vec::new();
                            for i in 0..500u64 {
                                let mut row = Vec::new();
                                let value = vec![t as u8; (i % 300) as usize];
                                let cells = [memlab_sdk::Cell { column: 0, value: &value }];
                                memlab_sdk::encode_row(&mut row, &t.to_be_bytes(), &i.to_be_bytes(), i + 1, false, cells);
                                let reference = arena.store(&mut pool, RowView::decode(&row).expect("row")).expect("store");
                                kept.push((row, reference, 0));
                            }
                            kept.last_mut().expect("rows").2 = pool.0;
                            kept
                        })
                    })
                    .collect();
                writers.into_iter().flat_map(|w| w.join().expect("writer")).collect()
            });
            for (row, reference, _) in &stored {
                assert_eq!(arena.load(*reference).expect("load"), row.as_slice(), "{reserve}");
            }
            let granted: u64 = stored.iter().map(|s| s.2).sum();
            let stats = arena.stats();
            let of = |stat: Stat| stat.of(&stats).expect("counter");
            assert_eq!(of(Stat::BytesReserved), granted, "{reserve}: the pools granted what it counts");
            assert_eq!(of(Stat::BytesUsed), stored.iter().map(|(r, _, _)| (LEN_PREFIX + r.len()) as u64).sum::<u64>(), "{reserve}");
            assert!(of(Stat::BytesUsed) <= of(Stat::BytesReserved), "{reserve}");
        }
    }
}
