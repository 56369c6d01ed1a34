//! The plugin's side of the native table: any kind's instance (its
//! `Hosted`, in the kind's own `native.rs`) behind `create` / `call` /
//! `drop`, every call inside `catch_unwind`, so a
//! panic comes back as a status (and poisons the instance) rather than
//! unwinding into the host. An instance keeps its input and answer
//! buffers, so a call allocates nothing its strategy does not.

use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{ABI_VERSION, CONCURRENT, NativeTable, PoolTable, SDK_VERSION, Slice, decode_pairs, error_status, status};
use crate::contract::{Kind, Op};
use crate::{Error, Packed};

/// One kind's instance, as the native table creates it.
pub trait Made: Sized + Send + 'static {
    /// The table's kind.
    const KIND: Kind;
    /// The strategy's name.
    const NAME: &'static str;
    /// The strategy's version.
    const VERSION: &'static str;
    /// Creates the instance `op` creates (the kind's `create`, or
    /// `reader.open` over data `a` and index `b`).
    fn create(op: Op, params: Vec<(String, String)>, a: &[u8], b: &[u8]) -> Result<Self, Error>;
}

/// An instance the host calls one call at a time.
pub trait Hosted: Made {
    /// Runs `op`, its answer in `answer`.
    fn call(&mut self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error>;
}

/// An instance the host may call from many threads at once (a
/// concurrent strategy's): its table says so ([`CONCURRENT`]).
pub trait SharedHosted: Made + Sync {
    /// Runs `op`, its answer in `answer`, beside other calls.
    fn call(&self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error>;
}

/// A call's inputs.
pub struct Input<'a> {
    /// The first, raw.
    pub a: &'a [u8],
    /// The second, when given.
    pub b: Option<&'a [u8]>,
    /// A number (a limit, a byte budget).
    pub n: u64,
    /// The host's pool, in `store` only.
    pub pool: Option<&'a PoolTable>,
    /// The thread's buffers for reading `a`.
    read: &'a mut Read,
}

/// A thread's buffers for a call's input: reused by every call on the
/// thread, so reading one allocates nothing once they have grown.
#[derive(Default)]
struct Read {
    batch: Packed,
    refs: Vec<u64>,
    ends: Vec<u32>,
}

impl Input<'_> {
    /// `a` read as a packed batch.
    pub fn packed(&mut self) -> Result<&Packed, Error> {
        self.read.batch.copy_from_wire(self.a)?;
        Ok(&self.read.batch)
    }

    /// `a`'s records, read where they lie (a flush's batch is megabytes).
    pub fn records(&mut self) -> Result<impl Iterator<Item = &[u8]>, Error> {
        crate::packed::wire_records(self.a, &mut self.read.ends)
    }

    /// `a` read as refs (u64 LE).
    pub fn refs(&mut self) -> Result<&[u64], Error> {
        if !self.a.len().is_multiple_of(8) {
            return Err(Error::Corrupt(format!("{} bytes of refs", self.a.len())));
        }
        self.read.refs.clear();
        self.read.refs.extend(self.a.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])));
        Ok(&self.read.refs)
    }
}

/// Where a call answers: a packed batch, or bytes. Both are the thread's,
/// reused by every call on it, and outlive the call until the thread's
/// next call into the table (the host copies the answer out first).
#[derive(Default)]
pub struct Answer {
    /// A packed answer, sealed into its wire form after the call.
    pub packed: Packed,
    /// A byte answer.
    pub bytes: Vec<u8>,
    sealed: bool,
}

impl Answer {
    fn clear(&mut self) {
        self.packed.clear();
        self.bytes.clear();
        self.sealed = false;
    }

    /// Answers `bytes`: copied into the thread's buffer where it fits, since
    /// replacing the buffer would drop what it grew to and the next large
    /// answer (a flush's next chunk) would grow it again; taken as it is
    /// where it does not, since growing to it would cost more than it.
    pub fn put(&mut self, bytes: Vec<u8>) {
        if self.bytes.is_empty() && self.bytes.capacity() < bytes.len() {
            self.bytes = bytes;
        } else {
            self.bytes.extend_from_slice(&bytes);
        }
    }

    /// Marks the packed buffer as the answer.
    pub fn seal(&mut self) {
        self.sealed = true;
    }

    fn wire(&mut self) -> &[u8] {
        if self.sealed { self.packed.seal() } else { &self.bytes }
    }
}

/// A call's number as a limit.
pub(crate) fn limit(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// An operation the instance does not take.
pub(crate) fn unknown(op: Op, kind: &str) -> Error {
    Error::InvalidState(format!("`{op}` is not a {kind} operation"))
}

/// An instance, and whether a panic poisoned it (atomic: a concurrent
/// instance's calls may panic on two threads at once).
struct Slot<H> {
    inner: H,
    poisoned: AtomicBool,
}

thread_local! {
    /// This thread's buffers: a call's input read, and its answer, which
    /// stays valid until the thread's next call into the table. Shared by
    /// every instance the thread calls, so a flush's fresh instances
    /// reuse what the last flush grew.
    static BUFFERS: RefCell<(Read, Answer)> = RefCell::default();
    /// The last panic's message on this thread, set by the hook.
    static PANIC: RefCell<String> = const { RefCell::new(String::new()) };
    /// A failed `create`'s message, until this thread's next `create`.
    static CREATE_OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Keeps a panic's message for the status instead of printing it: the
/// host reports it, with the plugin's name and the op.
fn install_panic_hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        // Only this table's calls keep the message quiet: a host that links
        // the table in-process keeps its own hook for its own panics.
        std::panic::set_hook(Box::new(move |info| {
            if IN_CALL.with(std::cell::Cell::get) {
                PANIC.with(|p| *p.borrow_mut() = info.to_string());
            } else {
                previous(info);
            }
        }));
    });
}

thread_local! {
    /// Whether this thread is inside a table's call.
    static IN_CALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` as a table's call: a panic is caught, its message kept.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Vec<u8>> {
    let outer = IN_CALL.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_CALL.with(|c| c.set(outer));
    result.map_err(|_| PANIC.with(|p| std::mem::take(&mut *p.borrow_mut())).into_bytes())
}

unsafe extern "C" fn create<H: Made>(op: u32, params: Slice, a: Slice, b: Slice, instance: *mut *mut c_void, out: *mut Slice) -> u32 {
    install_panic_hook();
    // SAFETY: the host lends each slice for the call (ABI contract).
    let (params, a, b) = unsafe { (params.get().unwrap_or_default(), a.get().unwrap_or_default(), b.get().unwrap_or_default()) };
    let made = match Op::from_code(op).filter(|o| o.kind() == H::KIND) {
        Some(op) => guarded(|| decode_pairs(params, 0).and_then(|(_, params)| H::create(op, params, a, b))),
        None => Ok(Err(Error::InvalidState(format!("operation {op} creates no {}", H::KIND)))),
    };
    let (code, message) = match made {
        Ok(Ok(inner)) => {
            let slot = Box::new(Slot { inner, poisoned: AtomicBool::new(false) });
            // SAFETY: the host hands a place for the instance.
            unsafe { *instance = Box::into_raw(slot).cast() };
            return status::OK;
        }
        Ok(Err(e)) => {
            let (code, m) = error_status(&e);
            (code, m.as_bytes().to_vec())
        }
        Err(message) => (status::PANICKED, message),
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

/// Runs one call with the thread's buffers; its status. `call` runs the
/// instance; a panic in it poisons `poisoned`.
fn run<H: Made>(
    poisoned: &AtomicBool,
    op: u32,
    input: (&[u8], Option<&[u8]>, u64, Option<&PoolTable>),
    (read, answer): &mut (Read, Answer),
    call: impl FnOnce(Op, Input<'_>, &mut Answer) -> Result<(), Error>,
) -> u32 {
    answer.clear();
    if poisoned.load(Ordering::Acquire) {
        answer.bytes.extend_from_slice(b"an earlier panic poisoned this instance");
        return status::PANICKED;
    }
    let Some(op) = Op::from_code(op).filter(|o| o.kind() == H::KIND) else {
        answer.put(format!("operation {op} is not a {}'s", H::KIND).into_bytes());
        return status::INVALID_STATE;
    };
    let (a, b, n, pool) = input;
    match guarded(|| call(op, Input { a, b, n, pool, read }, answer)) {
        Ok(Ok(())) => status::OK,
        Ok(Err(e)) => {
            let (code, m) = error_status(&e);
            answer.clear();
            answer.bytes.extend_from_slice(m.as_bytes());
            code
        }
        Err(message) => {
            poisoned.store(true, Ordering::Release);
            answer.clear();
            answer.put(message);
            status::PANICKED
        }
    }
}

/// Runs `call` with the thread's buffers and lends the answer in `out`.
///
/// # Safety
/// The host hands a place for the answer in `out`, and lends the slices
/// and the pool for the call (ABI contract).
unsafe fn answered<H: Made>(
    poisoned: &AtomicBool,
    op: u32,
    (a, b, n, pool): (Slice, Slice, u64, *const PoolTable),
    out: *mut Slice,
    call: impl FnOnce(Op, Input<'_>, &mut Answer) -> Result<(), Error>,
) -> u32 {
    // SAFETY: the host lends the slices and the pool for the call.
    let input = unsafe { (a.get().unwrap_or_default(), b.get(), n, pool.as_ref()) };
    BUFFERS.with(|buffers| {
        // A call from inside a call (no host makes one) finds the buffers
        // taken: refused, never aliased.
        let Ok(mut buffers) = buffers.try_borrow_mut() else {
            return status::INVALID_STATE;
        };
        let code = run::<H>(poisoned, op, input, &mut buffers, call);
        // SAFETY: the host hands a place for the answer, which the
        // thread's buffers keep until its next call into the table.
        unsafe { *out = Slice::of(buffers.1.wire()) };
        code
    })
}

unsafe extern "C" fn call<H: Hosted>(instance: *mut c_void, op: u32, a: Slice, b: Slice, n: u64, pool: *const PoolTable, out: *mut Slice) -> u32 {
    // SAFETY: `instance` is what `create::<H>` made and `drop` has not
    // freed; the host makes one call at a time on it (ABI contract).
    let slot = unsafe { &mut *instance.cast::<Slot<H>>() };
    let Slot { inner, poisoned } = slot;
    // SAFETY: the host's lends, as `answered` asks.
    unsafe { answered::<H>(poisoned, op, (a, b, n, pool), out, |op, input, answer| inner.call(op, input, answer)) }
}

unsafe extern "C" fn call_shared<H: SharedHosted>(instance: *mut c_void, op: u32, a: Slice, b: Slice, n: u64, pool: *const PoolTable, out: *mut Slice) -> u32 {
    // SAFETY: `instance` is what `create::<H>` made and `drop` has not
    // freed; the host may call it from many threads at once, which a
    // shared reference to a `Sync` instance allows (ABI contract: only a
    // table flagged `CONCURRENT` is called so).
    let slot = unsafe { &*instance.cast::<Slot<H>>() };
    // SAFETY: the host's lends, as `answered` asks.
    unsafe { answered::<H>(&slot.poisoned, op, (a, b, n, pool), out, |op, input, answer| slot.inner.call(op, input, answer)) }
}

unsafe extern "C" fn drop<H: Made>(instance: *mut c_void) {
    // SAFETY: `instance` came from `create::<H>` and is freed once.
    let slot = unsafe { Box::from_raw(instance.cast::<Slot<H>>()) };
    // A panic in a strategy's `Drop` must not unwind into the host.
    let _ = guarded(move || std::mem::drop(slot));
}

const fn text(s: &'static str) -> Slice {
    Slice { ptr: s.as_ptr(), len: s.len() }
}

/// The table of `H`, as `export!` emits it.
pub const fn table<H: Hosted>() -> NativeTable {
    NativeTable {
        abi: ABI_VERSION,
        kind: H::KIND as u32,
        flags: 0,
        sdk: text(SDK_VERSION),
        name: text(H::NAME),
        version: text(H::VERSION),
        create: create::<H>,
        call: call::<H>,
        drop: drop::<H>,
    }
}

/// The table of a concurrent `H`: flagged [`CONCURRENT`], its calls
/// made through a shared reference.
pub const fn shared_table<H: SharedHosted>() -> NativeTable {
    NativeTable {
        abi: ABI_VERSION,
        kind: H::KIND as u32,
        flags: CONCURRENT,
        sdk: text(SDK_VERSION),
        name: text(H::NAME),
        version: text(H::VERSION),
        create: create::<H>,
        call: call_shared::<H>,
        drop: drop::<H>,
    }
}
