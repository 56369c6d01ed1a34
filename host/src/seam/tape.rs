//! The bench's own calls into one shard, taped as they run: a secret
//! shard's first instance, its stores and inserts, up to a few MiB. After
//! the run the host replays the tape into twins in a pool like the
//! variant's (`bench/described.rs`), so a description is held to what the
//! plugin does on the bench's rows, in the bench's pool, not on a probe's
//! fixed workload that a plugin could recognise.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use memlab_sdk::{Entry, Packed};

use super::{SeamError, Shard};

/// Row and entry bytes a tape keeps at the most: enough for thousands of
/// calls, little beside a generation.
const TAPE_BYTES: u64 = 4 << 20;

/// One taped call.
#[derive(Debug, Clone)]
enum Taped {
    /// Rows stored, and the refs the live allocator gave them.
    Store(Packed, Vec<u64>),
    /// Entries inserted, under the live refs.
    Insert(Packed),
}

#[derive(Debug, Default)]
struct State {
    /// Set once the variant's own set-up calls are done: only a shard of
    /// the run is taped.
    open: bool,
    /// Set when a shard took the tape: one instance is taped.
    taken: bool,
    calls: Vec<Taped>,
    bytes: u64,
    rows: u64,
}

/// A tape shared by the variant's shard factory and the probe after the
/// run.
#[derive(Debug, Clone, Default)]
pub struct Tape(Arc<Mutex<State>>);

impl Tape {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on the first shard that asks is taped.
    pub fn open(&self) {
        self.state().open = true;
    }

    /// Whether a shard may take the tape: true once, after `open`.
    pub fn take(&self) -> bool {
        let mut state = self.state();
        let free = state.open && !state.taken;
        state.taken |= free;
        free
    }

    /// Tapes a call; false once the tape is full (the shard stops taping).
    fn keep(&self, call: Taped, bytes: u64) -> bool {
        let mut state = self.state();
        if state.bytes + bytes > TAPE_BYTES {
            return false;
        }
        state.bytes += bytes;
        state.calls.push(call);
        true
    }

    pub(super) fn stored(&self, rows: &Packed, refs: &[u64]) -> bool {
        let kept = self.keep(Taped::Store(rows.clone(), refs.to_vec()), rows.data_len() as u64);
        self.state().rows += if kept { rows.len() as u64 } else { 0 };
        kept
    }

    pub(super) fn inserted(&self, entries: &Packed) -> bool {
        self.keep(Taped::Insert(entries.clone()), entries.data_len() as u64)
    }

    /// Calls taped.
    pub fn calls(&self) -> usize {
        self.state().calls.len()
    }

    /// Rows the taped stores hold.
    pub fn rows(&self) -> u64 {
        self.state().rows
    }

    /// Replays the tape into `shard`, a fresh instance: each store, then
    /// each insert with its entries' refs turned into the ones `shard`'s
    /// allocator gave the same rows.
    pub fn replay(&self, shard: &mut Shard) -> Result<(), SeamError> {
        let calls = self.state().calls.clone();
        let mut refs: HashMap<u64, u64> = HashMap::new();
        for call in calls {
            match call {
                Taped::Store(mut rows, live) => {
                    let fresh = shard.store_rows(&mut rows)?;
                    refs.extend(live.into_iter().zip(fresh));
                }
                Taped::Insert(entries) => {
                    let mut mapped = Packed::with_capacity(entries.len(), entries.data_len());
                    for record in entries.iter() {
                        match Entry::decode(record) {
                            Ok(e) => {
                                let reference = refs.get(&e.reference).copied().unwrap_or(e.reference);
                                mapped.push_with(|buf| Entry { reference, ..e }.encode(buf));
                            }
                            Err(_) => mapped.push(record),
                        }
                    }
                    shard.insert(&mut mapped)?;
                }
            }
        }
        Ok(())
    }
}

/// What a twin shows after its calls, before any read: both kinds'
/// counters, its reservations and its memory. Two instances created with
/// the same parameters and given the same calls show the same.
pub fn behaviour(shard: &mut Shard) -> Result<String, SeamError> {
    let (m, a) = shard.stats()?;
    Ok(format!(
        "it counts {m:?} and {a:?}, reserved {} bytes in {} reservations, and holds {} bytes",
        shard.reserved_bytes(),
        shard.reservations(),
        shard.guest_memory_bytes()
    ))
}
