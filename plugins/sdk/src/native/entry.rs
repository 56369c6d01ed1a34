//! The plugin's side of the native table: each kind's instance behind
//! `create` / `call` / `drop`, every call inside `catch_unwind`, so a
//! panic comes back as a status (and poisons the instance) rather than
//! unwinding into the host.

use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{
    ABI_VERSION, NativeTable, PoolTable, SDK_VERSION, Slice, decode_pairs, encode_description, encode_finished, encode_refs, encode_replayed, encode_stats,
    error_status, op, role, status,
};
use crate::twin::{ArenaInstance, LogInstance, MemtableInstance, ReaderInstance, WriterInstance};
use crate::{Allocator, CommitLog, Error, Memtable, Packed, Pool, Serializer};

/// One kind's instance as the native table drives it.
pub trait Hosted: Sized + Send + 'static {
    /// The table's kind number.
    const KIND: u32;
    /// The strategy's name.
    const NAME: &'static str;
    /// The strategy's version.
    const VERSION: &'static str;
    /// Creates the instance of `role` (see [`role`]).
    fn create(role: u32, params: Vec<(String, String)>, a: &[u8], b: &[u8]) -> Result<Self, Error>;
    /// Runs `op` (see [`op`]), writing its answer to `out`.
    fn call(&mut self, op: u32, input: Input<'_>, out: &mut Vec<u8>) -> Result<(), Error>;
}

/// A call's inputs.
pub struct Input<'a> {
    /// The first.
    pub a: &'a [u8],
    /// The second, when given.
    pub b: Option<&'a [u8]>,
    /// A number (a limit, a byte budget).
    pub n: u64,
    /// The host's pool, in `store` only.
    pub pool: Option<&'a PoolTable>,
}

fn packed(bytes: &[u8]) -> Result<Packed, Error> {
    Packed::from_wire(bytes.to_vec())
}

fn limit(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn unknown(op: u32, kind: &str) -> Error {
    Error::InvalidState(format!("op {op} is not a {kind} op"))
}

/// A memtable and its open cursor.
pub struct MemtableOf<M: Memtable> {
    instance: MemtableInstance<M>,
    position: Option<M::Position>,
}

impl<M: Memtable + Send> Hosted for MemtableOf<M>
where
    M::Position: Send,
{
    const KIND: u32 = super::kind::MEMTABLE;
    const NAME: &'static str = M::NAME;
    const VERSION: &'static str = M::VERSION;

    fn create(_role: u32, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        Ok(MemtableOf { instance: MemtableInstance::create(params)?, position: None })
    }

    fn call(&mut self, op: u32, input: Input<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        let mut answer = Packed::new();
        match op {
            op::INSERT => return self.instance.insert(&packed(input.a)?),
            op::GET => self.instance.get(&packed(input.a)?, &mut answer),
            op::SCAN => self.instance.scan(input.a, input.b, limit(input.n), &mut answer),
            op::OPEN_CURSOR => {
                self.position = Some(self.instance.cursor());
                return Ok(());
            }
            op::NEXT => {
                let position = self.position.as_mut().ok_or_else(|| Error::InvalidState("no cursor is open".into()))?;
                self.instance.next(position, limit(input.n), &mut answer);
            }
            op::DESCRIBE => {
                *out = encode_description(self.instance.description());
                return Ok(());
            }
            op::STATS => {
                *out = encode_stats(&self.instance.stats());
                return Ok(());
            }
            other => return Err(unknown(other, "memtable")),
        }
        *out = answer.into_wire();
        Ok(())
    }
}

/// The host's pool as the allocator sees it, for one call.
struct HostPool<'a>(&'a PoolTable);

fn pool_result(code: u32) -> Result<(), Error> {
    match code {
        status::OK => Ok(()),
        _ => Err(Error::PoolFull),
    }
}

impl Pool for HostPool<'_> {
    fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
        // SAFETY: the host lent this table and its context for the call.
        pool_result(unsafe { (self.0.reserve)(self.0.ctx, bytes) })
    }

    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
        // SAFETY: as above; `sizes` outlives the call.
        pool_result(unsafe { (self.0.reserve_each)(self.0.ctx, sizes.as_ptr(), sizes.len()) })
    }

    fn release(&mut self, bytes: u64) {
        // SAFETY: as above.
        unsafe { (self.0.release)(self.0.ctx, bytes) }
    }
}

impl<A: Allocator + Send> Hosted for ArenaInstance<A> {
    const KIND: u32 = super::kind::ALLOCATOR;
    const NAME: &'static str = A::NAME;
    const VERSION: &'static str = A::VERSION;

    fn create(_role: u32, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        ArenaInstance::create(params)
    }

    fn call(&mut self, op: u32, input: Input<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        match op {
            op::STORE => {
                let pool = input.pool.ok_or_else(|| Error::InvalidState("store without a pool".into()))?;
                *out = encode_refs(&self.store(&mut HostPool(pool), &packed(input.a)?)?);
            }
            op::LOAD => {
                let refs = super::decode_refs(input.a)?;
                let mut answer = Packed::with_capacity(refs.len(), refs.len() * 128);
                self.load(&refs, &mut answer)?;
                *out = answer.into_wire();
            }
            op::DESCRIBE => *out = encode_description(self.description()),
            op::STATS => *out = encode_stats(&self.stats()),
            other => return Err(unknown(other, "allocator")),
        }
        Ok(())
    }
}

/// A serializer's writer or one of its readers.
pub enum SerializerOf<S: Serializer> {
    /// A segment being written.
    Writer(WriterInstance<S>),
    /// A segment being read.
    Reader(ReaderInstance<S::Reader>),
}

impl<S: Serializer + Send> Hosted for SerializerOf<S>
where
    S::Reader: Send,
{
    const KIND: u32 = super::kind::SERIALIZER;
    const NAME: &'static str = S::NAME;
    const VERSION: &'static str = S::VERSION;

    fn create(role: u32, params: Vec<(String, String)>, a: &[u8], b: &[u8]) -> Result<Self, Error> {
        match role {
            role::READER => Ok(SerializerOf::Reader(ReaderInstance::open(params, a.to_vec(), b.to_vec())?)),
            _ => Ok(SerializerOf::Writer(WriterInstance::create(params)?)),
        }
    }

    fn call(&mut self, op: u32, input: Input<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        match (self, op) {
            (SerializerOf::Writer(w), op::WRITE) => {
                let records = packed(input.a)?;
                let mut bytes = Vec::with_capacity(records.data_len() + records.data_len() / 4);
                w.write(&records, &mut bytes)?;
                *out = bytes;
            }
            (SerializerOf::Writer(w), op::FINISH) => {
                let mut tail = Vec::new();
                let finished = w.finish(&mut tail)?;
                *out = encode_finished(&tail, &finished);
            }
            (SerializerOf::Writer(w), op::DESCRIBE) => *out = encode_description(w.description()),
            (SerializerOf::Writer(w), op::STATS) => *out = encode_stats(&w.stats()),
            (SerializerOf::Reader(r), op::NEXT) => {
                let mut answer = Packed::new();
                r.next(limit(input.n), &mut answer)?;
                *out = answer.into_wire();
            }
            (SerializerOf::Reader(r), op::READER_GET) => {
                let mut answer = Packed::new();
                r.get(&packed(input.a)?, &mut answer)?;
                *out = answer.into_wire();
            }
            (_, other) => return Err(unknown(other, "serializer writer's or reader's")),
        }
        Ok(())
    }
}

impl<L: CommitLog + Send> Hosted for LogInstance<L> {
    const KIND: u32 = super::kind::COMMITLOG;
    const NAME: &'static str = L::NAME;
    const VERSION: &'static str = L::VERSION;

    fn create(_role: u32, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        LogInstance::create(params)
    }

    fn call(&mut self, op: u32, input: Input<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        match op {
            op::ENCODE => {
                let rows = packed(input.a)?;
                let mut bytes = Vec::with_capacity(rows.data_len() + rows.len() * 16 + 16);
                self.encode(&rows, &mut bytes)?;
                *out = bytes;
            }
            op::REPLAY => *out = encode_replayed(self.replay(input.a, limit(input.n))),
            op::DESCRIBE => *out = encode_description(self.description()),
            op::STATS => *out = encode_stats(&self.stats()),
            other => return Err(unknown(other, "commit-log")),
        }
        Ok(())
    }
}

/// An instance, its last answer, and whether a panic poisoned it.
struct Slot<H> {
    inner: H,
    out: Vec<u8>,
    poisoned: bool,
}

thread_local! {
    /// The last panic's message on this thread, set by the hook.
    static PANIC: RefCell<String> = const { RefCell::new(String::new()) };
    /// A failed `create`'s message, until this thread's next `create`.
    static CREATE_OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Keeps a panic's message for the status instead of printing it: the
/// host reports it, with the plugin's name and the op.
fn install_panic_hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| std::panic::set_hook(Box::new(|info| PANIC.with(|p| *p.borrow_mut() = info.to_string()))));
}

fn panic_message() -> Vec<u8> {
    PANIC.with(|p| std::mem::take(&mut *p.borrow_mut())).into_bytes()
}

unsafe extern "C" fn create<H: Hosted>(role: u32, params: Slice, a: Slice, b: Slice, instance: *mut *mut c_void, out: *mut Slice) -> u32 {
    install_panic_hook();
    // SAFETY: the host lends each slice for the call (ABI contract).
    let (params, a, b) = unsafe { (params.get().unwrap_or_default(), a.get().unwrap_or_default(), b.get().unwrap_or_default()) };
    let made = catch_unwind(|| decode_pairs(params, 0).and_then(|(_, params)| H::create(role, params, a, b)));
    let (code, message) = match made {
        Ok(Ok(inner)) => {
            let slot = Box::new(Slot { inner, out: Vec::new(), poisoned: false });
            // SAFETY: the host hands a place for the instance.
            unsafe { *instance = Box::into_raw(slot).cast() };
            return status::OK;
        }
        Ok(Err(e)) => {
            let (code, m) = error_status(&e);
            (code, m.as_bytes().to_vec())
        }
        Err(_) => (status::PANICKED, panic_message()),
    };
    CREATE_OUT.with(|c| {
        let mut c = c.borrow_mut();
        *c = message;
        // SAFETY: the host hands a place for the answer; it stays valid
        // until this thread's next `create`.
        unsafe { *out = Slice::of(&c) };
    });
    code
}

unsafe extern "C" fn call<H: Hosted>(instance: *mut c_void, op: u32, a: Slice, b: Slice, n: u64, pool: *const PoolTable, out: *mut Slice) -> u32 {
    // SAFETY: `instance` is what `create::<H>` made and `drop` has not
    // freed; the host makes one call at a time on it (ABI contract).
    let slot = unsafe { &mut *instance.cast::<Slot<H>>() };
    let code = if slot.poisoned {
        slot.out = b"an earlier panic poisoned this instance".to_vec();
        status::PANICKED
    } else {
        // SAFETY: the host lends the slices and the pool for the call.
        let input = unsafe { Input { a: a.get().unwrap_or_default(), b: b.get(), n, pool: pool.as_ref() } };
        let (inner, answer) = (&mut slot.inner, &mut slot.out);
        answer.clear();
        match catch_unwind(AssertUnwindSafe(|| inner.call(op, input, answer))) {
            Ok(Ok(())) => status::OK,
            Ok(Err(e)) => {
                let (code, m) = error_status(&e);
                *answer = m.as_bytes().to_vec();
                code
            }
            Err(_) => {
                slot.poisoned = true;
                slot.out = panic_message();
                status::PANICKED
            }
        }
    };
    // SAFETY: the host hands a place for the answer.
    unsafe { *out = Slice::of(&slot.out) };
    code
}

unsafe extern "C" fn drop<H: Hosted>(instance: *mut c_void) {
    // SAFETY: `instance` came from `create::<H>` and is freed once.
    let slot = unsafe { Box::from_raw(instance.cast::<Slot<H>>()) };
    // A panic in a strategy's `Drop` must not unwind into the host.
    let _ = catch_unwind(AssertUnwindSafe(move || std::mem::drop(slot)));
}

const fn text(s: &'static str) -> Slice {
    Slice { ptr: s.as_ptr(), len: s.len() }
}

/// The table of `H`, as `export!` emits it.
pub const fn table<H: Hosted>() -> NativeTable {
    NativeTable {
        abi: ABI_VERSION,
        kind: H::KIND,
        sdk: text(SDK_VERSION),
        name: text(H::NAME),
        version: text(H::VERSION),
        create: create::<H>,
        call: call::<H>,
        drop: drop::<H>,
    }
}
