//! The commit log's side of the checking layer: a shard's log format,
//! each call counted and checked (commitlog contracts 1 to 3) as
//! `shard.rs` does for the shard. What a replay gives back is held to
//! what was handed over by the host's own `commitlog::Kept`.

use memlab_sdk::twin::Replayed;
use memlab_sdk::{Description, Packed, Stats, Tail};

use super::books::packed_bytes;
use super::describe::bounded;
use super::watch::during;
use super::{Boundary, CommitLogRuntime, Fault, Op, SeamError};

/// A shard's commit-log format, checked and metered.
pub struct CommitLogFormat {
    runtime: Box<dyn CommitLogRuntime>,
    name: String,
    shard: usize,
    boundary: Boundary,
}

impl CommitLogFormat {
    /// Wraps a runtime's log format for `shard`.
    pub fn new(runtime: Box<dyn CommitLogRuntime>, name: &str, shard: usize) -> Self {
        CommitLogFormat { runtime, name: name.into(), shard, boundary: Boundary::default() }
    }

    fn fault(&self, operation: Op, fault: Fault) -> SeamError {
        SeamError::call(&self.name, operation, self.shard, fault)
    }

    fn contract(&self, operation: Op, detail: String) -> SeamError {
        SeamError::contract(&self.name, operation, self.shard, detail)
    }

    /// The format's name, as configured.
    pub fn plugin(&self) -> &str {
        &self.name
    }

    /// The log bytes of `rows` (lent, as `Shard::store_rows` lends them).
    pub fn encode(&mut self, rows: &mut Packed) -> Result<Vec<u8>, SeamError> {
        const OP: Op = Op::CommitLogEncode;
        self.boundary.calls += 1;
        self.boundary.bytes_in += packed_bytes(rows);
        let out = during(OP, self.shard, || self.runtime.encode(rows)).map_err(|f| self.fault(OP, f))?;
        self.boundary.bytes_out += out.len() as u64;
        match out.first() {
            None => Err(self.contract(OP, format!("returned no bytes for {} rows (contract 1)", rows.len()))),
            Some(0) => Err(self.contract(OP, "returned a record beginning with a zero byte, which reads as the end of a segment (contract 1)".into())),
            Some(_) => Ok(out),
        }
    }

    /// The intact records' rows from the start of `segment`, at most
    /// `max_rows`, with where the replay stopped.
    pub fn replay(&mut self, segment: &[u8], max_rows: u32) -> Result<Replayed, SeamError> {
        const OP: Op = Op::CommitLogReplay;
        self.boundary.calls += 1;
        self.boundary.bytes_in += segment.len() as u64;
        let replayed = during(OP, self.shard, || self.runtime.replay(segment, max_rows)).map_err(|f| self.fault(OP, f))?;
        self.boundary.bytes_out += packed_bytes(&replayed.rows);
        if replayed.intact > segment.len() as u64 {
            return Err(self.contract(OP, format!("said {} bytes were intact of a segment of {}", replayed.intact, segment.len())));
        }
        if replayed.tail == Tail::Clean && replayed.rows.len() < max_rows as usize && segment[replayed.intact as usize..].iter().any(|&b| b != 0) {
            return Err(self.contract(OP, format!("stopped clean at byte {} with bytes other than zeros after it (contract 2)", replayed.intact)));
        }
        Ok(replayed)
    }

    /// Every row of `segment` until it stops, replayed in as many calls
    /// as `max_rows` a call takes: the rows, the bytes intact, the tail.
    pub fn replay_all(&mut self, segment: &[u8], max_rows: u32) -> Result<Replayed, SeamError> {
        let mut rows = Packed::new();
        let mut at = 0usize;
        loop {
            let part = self.replay(&segment[at..], max_rows.max(1))?;
            part.rows.iter().for_each(|r| rows.push(r));
            at += part.intact as usize;
            let more = part.tail == Tail::Clean && part.rows.len() >= max_rows.max(1) as usize && at < segment.len() && part.intact > 0;
            if !more {
                return Ok(Replayed { rows, intact: at as u64, tail: part.tail });
            }
        }
    }

    /// What ran.
    pub fn describe(&mut self) -> Result<Description, SeamError> {
        self.boundary.calls += 1;
        self.runtime.describe().map_err(|f| self.fault(Op::CommitLogDescribe, f))
    }

    /// The format's own counters: reported by the plugin, shown apart.
    pub fn stats(&mut self) -> Result<Stats, SeamError> {
        self.boundary.calls += 1;
        let stats = self.runtime.stats().map_err(|f| self.fault(Op::CommitLogStats, f))?;
        bounded(&stats).map_err(|detail| self.contract(Op::CommitLogStats, detail))?;
        Ok(stats)
    }

    /// Boundary traffic so far.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }
}
