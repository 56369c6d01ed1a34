//! The commit-log format's instance as the native table drives it: each operation
//! by its code, its answer in the thread's buffers.

use crate::contract::{Kind, Op};
use crate::native::entry::{limit, unknown};
use crate::native::{Answer, Hosted, Input, Made, encode_description, encode_replayed, encode_stats};
use crate::twin::CommitLogInstance;
use crate::{CommitLog, Error};

/// A commit-log format as the native table holds it.
pub struct CommitLogOf<L: CommitLog>(CommitLogInstance<L>);

impl<L: CommitLog + Send> Made for CommitLogOf<L> {
    const KIND: Kind = Kind::CommitLog;
    const NAME: &'static str = L::NAME;
    const VERSION: &'static str = L::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        CommitLogInstance::create(params).map(CommitLogOf)
    }
}

impl<L: CommitLog + Send> Hosted for CommitLogOf<L> {
    fn call(&mut self, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        let log = &mut self.0;
        match op {
            Op::CommitLogEncode => log.encode(input.packed()?, &mut answer.bytes)?,
            Op::CommitLogReplay => answer.put(encode_replayed(log.replay(input.a, limit(input.n)))),
            Op::CommitLogDescribe => answer.put(encode_description(log.description())),
            Op::CommitLogStats => answer.put(encode_stats(&log.stats())),
            other => return Err(unknown(other, "commit-log")),
        }
        Ok(())
    }
}
