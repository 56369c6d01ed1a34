//! The native twins of the bundled commit-log formats, driven through
//! the SDK's `LogInstance` as the wasm glue drives it.

use memlab_sdk::twin::{LogInstance, Replayed};
use memlab_sdk::{CommitLog, Description, Error, Packed, Stats};

use super::Params;
use crate::seam::{self, Fault, Kind, LogRuntime, SeamError};

/// A native commit-log format.
pub trait LogTwin: Send {
    /// See `LogInstance::encode`.
    fn encode(&mut self, rows: &mut Packed, out: &mut Vec<u8>) -> Result<(), Error>;
    /// See `LogInstance::replay`.
    fn replay(&self, segment: &[u8], max_rows: u32) -> Replayed;
    /// What `create` applied.
    fn description(&self) -> Description;
    /// Counters.
    fn stats(&self) -> Stats;
}

impl<L: CommitLog + Send> LogTwin for LogInstance<L> {
    fn encode(&mut self, rows: &mut Packed, out: &mut Vec<u8>) -> Result<(), Error> {
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

pub(super) struct NativeLog(pub(super) Box<dyn LogTwin>);

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

/// Creates a shard's bundled log format, checked and metered by the seam.
pub fn log_format(name: &str, params: &[(String, String)], shard: usize) -> Result<seam::LogFormat, SeamError> {
    super::Strategy::bundled(name, Kind::CommitLog)?.log_format(params, shard)
}
