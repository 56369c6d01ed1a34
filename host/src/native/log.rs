//! The native twins of the bundled commit-log formats, driven through
//! the SDK's `LogInstance` as the wasm glue drives it.

use memlab_sdk::twin::{LogInstance, Replayed};
use memlab_sdk::{CommitLog, Description, Error, Packed, Stats};

use super::{Params, Twin, created, twin};
use crate::seam::{self, Fault, Kind, LogRuntime, Op, SeamError};

/// A native commit-log format.
pub trait LogTwin: Send {
    /// See `LogInstance::encode`.
    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error>;
    /// See `LogInstance::replay`.
    fn replay(&self, segment: &[u8], max_rows: u32) -> Replayed;
    /// What `create` applied.
    fn description(&self) -> Description;
    /// Counters.
    fn stats(&self) -> Stats;
}

impl<L: CommitLog + Send> LogTwin for LogInstance<L> {
    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        LogInstance::encode(self, rows, out)
    }

    fn replay(&self, segment: &[u8], max_rows: u32) -> Replayed {
        LogInstance::replay(self, segment, max_rows)
    }

    fn description(&self) -> Description {
        LogInstance::description(self).clone()
    }

    fn stats(&self) -> Stats {
        LogInstance::stats(self)
    }
}

/// Creates the native twin of commit-log format `L`.
pub fn commitlog<L: CommitLog + Send>(params: Params) -> Result<Box<dyn LogTwin>, Error> {
    Ok(Box::new(LogInstance::<L>::create(params)?))
}

struct NativeLog(Box<dyn LogTwin>);

impl LogRuntime for NativeLog {
    fn encode(&mut self, rows: &mut Packed) -> Result<Vec<u8>, Fault> {
        let mut out = Vec::with_capacity(rows.data_len() + rows.len() * 16 + 16);
        self.0.encode(rows, &mut out).map_err(Fault::Guest)?;
        Ok(out)
    }

    fn replay(&mut self, segment: &[u8], max_rows: u32) -> Result<Replayed, Fault> {
        Ok(self.0.replay(segment, max_rows))
    }

    fn describe(&mut self) -> Result<Description, Fault> {
        Ok(self.0.description())
    }

    fn stats(&mut self) -> Result<Stats, Fault> {
        Ok(self.0.stats())
    }
}

/// Creates a shard's native log format, checked and metered by the seam.
pub fn log_format(name: &str, params: &[(String, String)], shard: usize) -> Result<seam::LogFormat, SeamError> {
    let Twin::CommitLog(new) = twin(name, Kind::CommitLog)? else {
        // `twin` finds only twins of the kind asked for.
        return Err(SeamError::NoTwin { plugin: name.into() });
    };
    let format = new(params.to_vec()).map_err(created(name, Op::CommitLogCreate, shard))?;
    Ok(seam::LogFormat::new(Box::new(NativeLog(format)), name, shard))
}
