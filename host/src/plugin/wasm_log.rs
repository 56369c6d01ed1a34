//! A shard's commit-log format as a wasm component, in a store of its
//! own: a trap in the shard's memtable or allocator leaves the log that
//! replays their generation untouched.

use std::sync::Arc;

use memlab_sdk::twin::Replayed;
use memlab_sdk::{Description, Packed, Stats, Tail};

use super::Indices;
use super::bindings::commitlog;
use super::wasm::{Caller, create_failed, description, instantiate, load_failed, packed_out, wrong_kind};
use super::{Plugin, PluginHost};
use crate::seam::watch::during;
use crate::seam::{CommitLogRuntime, Fault, Kind, Op, SeamError};

struct WasmCommitLog {
    caller: Caller,
    plugin: Arc<Plugin>,
    api: commitlog::Guest,
}

/// Instantiates a log format for `shard` and creates it.
pub(super) fn commitlog(host: &PluginHost, plugin: &Arc<Plugin>, params: &[(String, String)], shard: usize) -> Result<Box<dyn CommitLogRuntime>, SeamError> {
    let mut caller = Caller::new(host, None);
    let Indices::CommitLog(indices) = &plugin.indices else {
        return Err(wrong_kind(plugin, Kind::CommitLog));
    };
    let instance = instantiate(&mut caller, plugin)?;
    let api = indices.load(&mut caller.store, &instance).map_err(|e| load_failed(plugin, e))?;
    during(Op::CommitLogCreate, shard, || caller.try_call(plugin, Op::CommitLogCreate, |s| api.call_create(s, &params.to_vec()))).map_err(create_failed(
        plugin,
        Op::CommitLogCreate,
        shard,
    ))?;
    Ok(Box::new(WasmCommitLog { caller, plugin: Arc::clone(plugin), api }))
}

impl CommitLogRuntime for WasmCommitLog {
    fn encode(&mut self, rows: &mut Packed) -> Result<Vec<u8>, Fault> {
        let api = &self.api;
        rows.with_wire(|wire| self.caller.try_call(&self.plugin, Op::CommitLogEncode, |s| api.call_encode(s, wire)))
    }

    fn replay(&mut self, segment: &[u8], max_rows: u32) -> Result<Replayed, Fault> {
        let api = &self.api;
        let r = self.caller.try_call(&self.plugin, Op::CommitLogReplay, |s| api.call_replay(s, segment, max_rows))?;
        let tail = match r.tail {
            commitlog::Tail::Clean => Tail::Clean,
            commitlog::Tail::Torn => Tail::Torn,
            commitlog::Tail::Damaged => Tail::Damaged,
        };
        Ok(Replayed { rows: packed_out(r.rows)?, intact: r.intact, tail })
    }

    fn describe(&mut self) -> Result<Description, Fault> {
        let api = &self.api;
        self.caller.call(&self.plugin, Op::CommitLogDescribe, |s| api.call_describe(s)).map(description)
    }

    fn stats(&mut self) -> Result<Stats, Fault> {
        let api = &self.api;
        self.caller.call(&self.plugin, Op::CommitLogStats, |s| api.call_stats(s))
    }
}
