//! The host's side of the native table: an instance behind `Remote`,
//! each call's bytes lent for the call and its answer copied into the
//! caller's buffer, as the canonical ABI copies a component's.

use std::ffi::c_void;

use super::{NativeTable, PoolTable, Slice, encode_pairs, status, status_error};
use crate::contract::Op;
use crate::{Error, Packed, Pool};

/// How a call failed.
#[derive(Debug)]
pub enum Called {
    /// The plugin returned an error.
    Error(Error),
    /// The plugin panicked (the instance is poisoned); the panic's message.
    Panicked(String),
}

/// One instance of a native plugin.
pub struct Remote {
    table: &'static NativeTable,
    instance: *mut c_void,
}

// SAFETY: every `Hosted` instance is `Send`, and `Remote`'s calls take
// `&mut self`, so they never overlap.
unsafe impl Send for Remote {}

/// A call's outcome from its status and the answer it left.
fn outcome(code: u32, answer: &[u8]) -> Result<(), Called> {
    if code == status::OK {
        return Ok(());
    }
    let message = String::from_utf8_lossy(answer).into_owned();
    match status_error(code, message.clone()) {
        Some(e) => Err(Called::Error(e)),
        None => Err(Called::Panicked(message)),
    }
}

impl Remote {
    /// Creates the instance `op` creates (the kind's `create`, or
    /// `reader.open`) with `params` and the operation's inputs.
    ///
    /// # Safety
    /// `table` must be a native plugin's table whose functions keep this
    /// module's contract, its library loaded for as long as the process.
    pub unsafe fn create(table: &'static NativeTable, op: Op, params: &[(String, String)], a: &[u8], b: &[u8]) -> Result<Remote, Called> {
        let params = encode_pairs([], params);
        let mut instance = std::ptr::null_mut();
        let mut out = Slice::NONE;
        // SAFETY: the slices outlive the call; the caller vouches for `table`.
        let code = unsafe { (table.create)(op.code(), Slice::of(&params), Slice::of(a), Slice::of(b), &mut instance, &mut out) };
        if code == status::OK && !instance.is_null() {
            return Ok(Remote { table, instance });
        }
        // SAFETY: the answer stays valid until this thread's next `create`.
        match outcome(code, unsafe { out.get() }.unwrap_or_default()) {
            Ok(()) => Err(Called::Error(Error::Other("create succeeded without an instance".into()))),
            Err(e) => Err(e),
        }
    }

    /// Calls `op`, lending the pool for `store-rows`, and hands its answer
    /// to `take`, which must copy it out: it stays valid only until the
    /// thread's next call into the table, so it never leaves this call.
    fn raw<R>(&self, op: Op, (a, b, n): (&[u8], Option<&[u8]>, u64), pool: Option<&mut dyn Pool>, take: impl FnOnce(&[u8]) -> R) -> Result<R, Called> {
        let b = b.map_or(Slice::NONE, Slice::of);
        let mut out = Slice::NONE;
        let code = match pool {
            None => {
                // SAFETY: `instance` is live and the slices outlive the call.
                unsafe { (self.table.call)(self.instance, op.code(), Slice::of(a), b, n, std::ptr::null(), &mut out) }
            }
            Some(pool) => {
                let mut pool: &mut dyn Pool = pool;
                let table = PoolTable { ctx: (&raw mut pool).cast(), reserve, reserve_each, release };
                // SAFETY: as above; `table` and the pool it points at outlive the call.
                unsafe { (self.table.call)(self.instance, op.code(), Slice::of(a), b, n, &table, &mut out) }
            }
        };
        // SAFETY: the plugin keeps `out` valid until the thread's next
        // call into the table; `take` copies it before any can be made.
        let answer = unsafe { out.get() }.unwrap_or_default();
        outcome(code, answer).map(|()| take(answer))
    }

    /// Calls `op`; its byte answer into `out` (emptied first).
    pub fn call_bytes(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Vec<u8>) -> Result<(), Called> {
        out.clear();
        self.raw(op, (a, b, n), None, |answer| out.extend_from_slice(answer))
    }

    /// Calls `op` with the host's pool lent; its byte answer into `out`.
    pub fn call_with_pool(&mut self, op: Op, a: &[u8], pool: &mut dyn Pool, out: &mut Vec<u8>) -> Result<(), Called> {
        out.clear();
        self.raw(op, (a, None, 0), Some(pool), |answer| out.extend_from_slice(answer))
    }

    /// Calls `op`; its packed answer into `out`, checked.
    pub fn call_packed(&mut self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Called> {
        self.raw(op, (a, b, n), None, |wire| out.copy_from_wire(wire))?.map_err(Called::Error)
    }
}

/// An instance of a concurrent strategy, which any thread may call
/// while others do.
pub struct SharedRemote(Remote);

// SAFETY: made only from a table flagged `CONCURRENT`, whose instances
// are `Sync` and take calls through a shared reference (`shared_table`);
// each call's answer lives in the calling thread's buffers.
unsafe impl Sync for SharedRemote {}

impl SharedRemote {
    /// `remote`, when its table says its instances take concurrent calls.
    pub fn of(remote: Remote) -> Result<SharedRemote, Remote> {
        match remote.table.flags & super::CONCURRENT {
            0 => Err(remote),
            _ => Ok(SharedRemote(remote)),
        }
    }

    /// The instance for one thread again (the flush's).
    pub fn into_inner(self) -> Remote {
        self.0
    }

    /// As [`Remote::call_bytes`], beside other threads' calls.
    pub fn call_bytes(&self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Vec<u8>) -> Result<(), Called> {
        out.clear();
        self.0.raw(op, (a, b, n), None, |answer| out.extend_from_slice(answer))
    }

    /// As [`Remote::call_with_pool`], beside other threads' calls.
    pub fn call_with_pool(&self, op: Op, a: &[u8], pool: &mut dyn Pool, out: &mut Vec<u8>) -> Result<(), Called> {
        out.clear();
        self.0.raw(op, (a, None, 0), Some(pool), |answer| out.extend_from_slice(answer))
    }

    /// As [`Remote::call_packed`], beside other threads' calls.
    pub fn call_packed(&self, op: Op, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Called> {
        self.0.raw(op, (a, b, n), None, |wire| out.copy_from_wire(wire))?.map_err(Called::Error)
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        // SAFETY: `instance` came from this table's `create`, freed once.
        unsafe { (self.table.drop)(self.instance) }
    }
}

/// The pool `Remote::raw` lent for the call in flight.
///
/// # Safety
/// `ctx` must be the `PoolTable::ctx` of a call still running: a pointer
/// to the `&mut dyn Pool` that `Remote::raw` lent, which no one else
/// uses until the call returns. The reference must not outlive the call.
unsafe fn pool_of<'a>(ctx: *mut c_void) -> &'a mut dyn Pool {
    // SAFETY: the caller vouches that `ctx` is the lent `&mut dyn Pool`.
    unsafe { &mut **ctx.cast::<&mut dyn Pool>() }
}

fn code(result: Result<(), Error>) -> u32 {
    match result {
        Ok(()) => status::OK,
        Err(e) => super::error_status(&e).0,
    }
}

unsafe extern "C" fn reserve(ctx: *mut c_void, bytes: u64) -> u32 {
    // SAFETY: the plugin calls back with the context of the call in flight.
    code(unsafe { pool_of(ctx) }.reserve(bytes))
}

unsafe extern "C" fn reserve_each(ctx: *mut c_void, sizes: *const u64, len: usize) -> u32 {
    let sizes = if sizes.is_null() {
        &[][..]
    } else {
        // SAFETY: the plugin lends `len` sizes for the call.
        unsafe { std::slice::from_raw_parts(sizes, len) }
    };
    // SAFETY: as in `reserve`.
    code(unsafe { pool_of(ctx) }.reserve_each(sizes))
}

unsafe extern "C" fn release(ctx: *mut c_void, bytes: u64) {
    // SAFETY: as in `reserve`.
    unsafe { pool_of(ctx) }.release(bytes);
}
