//! `defaults` at size: the at-size instance has a twin created with
//! exactly what the plugin described, fed the same calls. A default used
//! only past `defaults`' small fixed workload shows here, as it does on a
//! bench's taped calls (`bench/described.rs`).

use super::ShardSubject;
use super::defaults::described;
use crate::seam::{Shard, behaviour};

/// The twin, where the description lists more than was configured.
pub(super) struct Twin {
    shard: Shard,
    params: Vec<(String, String)>,
}

impl ShardSubject<'_> {
    /// A shard created with what the plugin under check describes of
    /// itself, in the pool the next `shard` draws.
    pub(super) fn described_twin(&self) -> Result<Option<Twin>, String> {
        let params = described(&self.described(self.params).map_err(|e| e.to_string())?);
        let mut configured = self.params.to_vec();
        configured.sort();
        if params == configured {
            return Ok(None);
        }
        let shard = self.shard(&params).map_err(|e| format!("refused what it described: {e}"))?;
        Ok(Some(Twin { shard, params }))
    }
}

impl Twin {
    /// The twin's shard, to feed the same calls.
    pub(super) fn shard(&mut self) -> &mut Shard {
        &mut self.shard
    }

    /// Holds the twin to `shard` after the same calls, before any read:
    /// the same counters, reservations and memory.
    pub(super) fn holds(mut self, shard: &mut Shard) -> Result<(), String> {
        let trace = |shard: &mut Shard| behaviour(shard).map_err(|e| e.to_string());
        let (configured, twin) = (trace(shard)?, trace(&mut self.shard)?);
        if configured == twin {
            return Ok(());
        }
        let shown: Vec<String> = self.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        Err(format!("created with what it described ({}), it differs at size: as configured {configured}; with its description {twin}", shown.join(", ")))
    }
}
