//! The host's side of the native table: an instance behind `Remote`,
//! each call's bytes lent for the call and its answer copied out, as the
//! canonical ABI copies a component's.

use std::ffi::c_void;

use super::{NativeTable, PoolTable, Slice, encode_pairs, status, status_error};
use crate::{Error, Pool};

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

// SAFETY: every `Hosted` instance is `Send`, and `Remote` is not `Sync`,
// so its calls never overlap.
unsafe impl Send for Remote {}

fn answer(code: u32, out: Slice) -> Result<Vec<u8>, Called> {
    // SAFETY: the plugin keeps `out` valid until the instance's next call
    // (or this thread's next `create`); it is copied before either.
    let bytes = unsafe { out.get() }.unwrap_or_default().to_vec();
    if code == status::OK {
        return Ok(bytes);
    }
    let message = String::from_utf8_lossy(&bytes).into_owned();
    match status_error(code, message.clone()) {
        Some(e) => Err(Called::Error(e)),
        None => Err(Called::Panicked(message)),
    }
}

impl Remote {
    /// Creates an instance of `role` with `params` and the role's inputs.
    ///
    /// # Safety
    /// `table` must be a native plugin's table whose functions keep this
    /// module's contract, its library loaded for as long as the process.
    pub unsafe fn create(table: &'static NativeTable, role: u32, params: &[(String, String)], a: &[u8], b: &[u8]) -> Result<Remote, Called> {
        let params = encode_pairs([], params);
        let mut instance = std::ptr::null_mut();
        let mut out = Slice::NONE;
        // SAFETY: the slices outlive the call; the caller vouches for `table`.
        let code = unsafe { (table.create)(role, Slice::of(&params), Slice::of(a), Slice::of(b), &mut instance, &mut out) };
        if code == status::OK && !instance.is_null() {
            return Ok(Remote { table, instance });
        }
        match answer(code, out) {
            Ok(_) => Err(Called::Error(Error::Other("create succeeded without an instance".into()))),
            Err(e) => Err(e),
        }
    }

    /// Calls `op` with its inputs (and the pool, for `store`); the answer.
    pub fn call(&self, op: u32, a: &[u8], b: Option<&[u8]>, n: u64, pool: Option<&mut dyn Pool>) -> Result<Vec<u8>, Called> {
        let b = b.map_or(Slice::NONE, Slice::of);
        let mut out = Slice::NONE;
        let code = match pool {
            None => {
                // SAFETY: `instance` is live and the slices outlive the call.
                unsafe { (self.table.call)(self.instance, op, Slice::of(a), b, n, std::ptr::null(), &mut out) }
            }
            Some(pool) => {
                let mut pool: &mut dyn Pool = pool;
                let table = PoolTable { ctx: (&raw mut pool).cast(), reserve, reserve_each, release };
                // SAFETY: as above; `table` and the pool it points at outlive the call.
                unsafe { (self.table.call)(self.instance, op, Slice::of(a), b, n, &table, &mut out) }
            }
        };
        answer(code, out)
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        // SAFETY: `instance` came from this table's `create`, freed once.
        unsafe { (self.table.drop)(self.instance) }
    }
}

fn pool_of<'a>(ctx: *mut c_void) -> &'a mut dyn Pool {
    // SAFETY: `ctx` is the `&mut dyn Pool` `Remote::call` lent for this call.
    unsafe { &mut **ctx.cast::<&mut dyn Pool>() }
}

fn code(result: Result<(), Error>) -> u32 {
    match result {
        Ok(()) => status::OK,
        Err(e) => super::error_status(&e).0,
    }
}

unsafe extern "C" fn reserve(ctx: *mut c_void, bytes: u64) -> u32 {
    code(pool_of(ctx).reserve(bytes))
}

unsafe extern "C" fn reserve_each(ctx: *mut c_void, sizes: *const u64, len: usize) -> u32 {
    let sizes = if sizes.is_null() {
        &[][..]
    } else {
        // SAFETY: the plugin lends `len` sizes for the call.
        unsafe { std::slice::from_raw_parts(sizes, len) }
    };
    code(pool_of(ctx).reserve_each(sizes))
}

unsafe extern "C" fn release(ctx: *mut c_void, bytes: u64) {
    pool_of(ctx).release(bytes);
}
