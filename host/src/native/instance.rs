//! One native instance: its table, called by one thread at a time or
//! by any, and the plugin it is named by. Every call is one call of the
//! table, its batch lent in wire form and its answer copied into the
//! caller's buffer.

use std::sync::Arc;

use memlab_sdk::native::{Called, Remote, SharedRemote};
use memlab_sdk::{Error, Op, Packed, Pool};

use super::library::thrown;
use crate::seam::Fault;
use crate::seam::watch::during;

/// A native instance's table, called by one thread at a time (`Remote`)
/// or by any (`SharedRemote`, a concurrent strategy's).
pub(super) trait Remotely: Send {
    fn call_bytes(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Vec<u8>) -> Result<(), Called>;
    fn call_with_pool(&mut self, op: Op, a: &[u8], pool: &mut dyn Pool, out: &mut Vec<u8>) -> Result<(), Called>;
    fn call_packed(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Called>;
}

impl Remotely for Remote {
    fn call_bytes(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Vec<u8>) -> Result<(), Called> {
        Remote::call_bytes(self, op, a, b, n, out)
    }
    fn call_with_pool(&mut self, op: Op, a: &[u8], pool: &mut dyn Pool, out: &mut Vec<u8>) -> Result<(), Called> {
        Remote::call_with_pool(self, op, a, pool, out)
    }
    fn call_packed(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Called> {
        Remote::call_packed(self, op, a, b, n, out)
    }
}

impl Remotely for SharedRemote {
    fn call_bytes(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Vec<u8>) -> Result<(), Called> {
        SharedRemote::call_bytes(self, op, a, b, n, out)
    }
    fn call_with_pool(&mut self, op: Op, a: &[u8], pool: &mut dyn Pool, out: &mut Vec<u8>) -> Result<(), Called> {
        SharedRemote::call_with_pool(self, op, a, pool, out)
    }
    fn call_packed(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Called> {
        SharedRemote::call_packed(self, op, a, b, n, out)
    }
}

/// One native instance, named by its plugin, with a buffer for its byte
/// answers.
pub(super) struct Instance<R = Remote> {
    pub(super) remote: R,
    pub(super) plugin: Arc<str>,
    pub(super) bytes: Vec<u8>,
}

impl<R: Remotely> Instance<R> {
    pub(super) fn new(remote: R, plugin: &Arc<str>) -> Self {
        Instance { remote, plugin: Arc::clone(plugin), bytes: Vec::new() }
    }

    /// A call answered with bytes, left in `self.bytes`.
    pub(super) fn bytes(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64) -> Result<&[u8], Fault> {
        let called = during(op, 0, || self.remote.call_bytes(op, a, b, n, &mut self.bytes));
        called.map_err(|c| Fault::Guest(thrown(&self.plugin, op, c)))?;
        Ok(&self.bytes)
    }

    /// A call answered with a packed batch, into `out`.
    pub(super) fn packed(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Fault> {
        let called = during(op, 0, || self.remote.call_packed(op, a, b, n, out));
        called.map_err(|c| Fault::Guest(thrown(&self.plugin, op, c)))
    }

    /// A call answered with bytes in one of the table's encodings.
    pub(super) fn decoded<T>(&mut self, op: Op, decode: fn(&[u8]) -> Result<T, Error>) -> Result<T, Fault> {
        let bytes = self.bytes(op, &[], None, 0)?;
        decode(bytes).map_err(|e| Fault::Contract(format!("{op}: {e}")))
    }

    /// A batch lent in wire form, answered with bytes into `out`.
    pub(super) fn lent(&mut self, op: Op, batch: &mut Packed, out: &mut Vec<u8>) -> Result<(), Fault> {
        let Instance { remote, plugin, .. } = self;
        during(op, 0, || batch.with_wire(|wire| remote.call_bytes(op, wire, None, 0, out))).map_err(|c| Fault::Guest(thrown(plugin, op, c)))
    }
}
