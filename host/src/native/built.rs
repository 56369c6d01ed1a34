//! A plugin crate built for the host (`--build --native`), loaded as a
//! shared library through the SDK's C-ABI table and wrapped in the same
//! twin traits as a bundled strategy, so `seam` checks and meters it alike.
//! Loading it runs its code outside the sandbox: only `--native` asks for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use memlab_sdk::native::{ABI_VERSION, Called, ENTRY_SYMBOL, NativeTable, Remote, SDK_VERSION, kind, op, role};
use memlab_sdk::native::{decode_description, decode_finished, decode_refs, decode_replayed, decode_stats, encode_refs};
use memlab_sdk::twin::Replayed;
use memlab_sdk::{Description, Error, Finished, Packed, Pool, Stats};

use super::{AllocatorTwin, LogTwin, MemtableTwin, Params, ReaderTwin, WriterTwin};
use crate::seam::{Kind, LoadError};

/// A loaded native plugin: its table, for as long as the process lives.
#[derive(Clone, Copy)]
pub struct Library {
    table: &'static NativeTable,
    /// Its kind, as its table says.
    pub kind: Kind,
}

/// Libraries loaded so far, by path: `dlopen` keeps one copy per path for
/// the process anyway, and none is ever unloaded (instances point into it).
fn loaded() -> &'static Mutex<HashMap<PathBuf, Library>> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Library>>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

fn text(slice: memlab_sdk::native::Slice) -> String {
    // SAFETY: a table's strings are 'static in its library, never unloaded.
    String::from_utf8_lossy(unsafe { slice.get() }.unwrap_or_default()).into_owned()
}

impl Library {
    /// Loads the shared library at `path` (named by its sha256, so its
    /// bytes never change) and checks its table.
    pub fn open(plugin: &str, path: &Path) -> Result<Library, LoadError> {
        let fail = |detail: String| LoadError::Native { plugin: plugin.to_string(), detail };
        let mut loaded = loaded().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(library) = loaded.get(path) {
            return Ok(*library);
        }
        // SAFETY: loading runs the library's initialisers: the user asked
        // for this crate's code to run natively (`--native`).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| fail(format!("{}: {e}", path.display())))?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        // SAFETY: the SDK's `export!` defines the symbol with this type.
        let entry = unsafe { lib.get::<unsafe extern "C" fn() -> *const NativeTable>(ENTRY_SYMBOL) }
            .map_err(|e| fail(format!("no memlab entry ({e}): does it call `memlab_sdk::export!`?")))?;
        // SAFETY: as above; the table it returns is static in the library.
        let table = unsafe { entry().as_ref() }.ok_or_else(|| fail("its entry returned no table".into()))?;
        if table.abi != ABI_VERSION || text(table.sdk) != SDK_VERSION {
            return Err(fail(format!(
                "built with memlab-sdk {} (native ABI {}), but this host is memlab-sdk {SDK_VERSION} (ABI {ABI_VERSION}); rebuild it",
                text(table.sdk),
                table.abi
            )));
        }
        let kind = match table.kind {
            kind::MEMTABLE => Kind::Memtable,
            kind::ALLOCATOR => Kind::Allocator,
            kind::SERIALIZER => Kind::Serializer,
            kind::COMMITLOG => Kind::CommitLog,
            other => return Err(fail(format!("its table names kind {other}"))),
        };
        let library = Library { table, kind };
        loaded.insert(path.to_path_buf(), library);
        Ok(library)
    }

    /// The strategy's name, as it names itself.
    pub fn name(&self) -> String {
        text(self.table.name)
    }

    fn create(&self, plugin: &str, role: u32, params: &Params, a: &[u8], b: &[u8]) -> Result<Instance, Error> {
        // SAFETY: `open` checked the table's ABI; the library is never unloaded.
        let remote = unsafe { Remote::create(self.table, role, params, a, b) }.map_err(|c| thrown(plugin, "create", c))?;
        Ok(Instance { remote, plugin: plugin.to_string() })
    }

    /// A memtable instance.
    pub fn memtable(&self, plugin: &str, params: Params) -> Result<Box<dyn MemtableTwin>, Error> {
        Ok(Box::new(self.create(plugin, role::MAIN, &params, &[], &[])?))
    }

    /// An allocator instance.
    pub fn allocator(&self, plugin: &str, params: Params) -> Result<Box<dyn AllocatorTwin>, Error> {
        Ok(Box::new(self.create(plugin, role::MAIN, &params, &[], &[])?))
    }

    /// A serializer's writer.
    pub fn writer(&self, plugin: &str, params: Params) -> Result<Box<dyn WriterTwin>, Error> {
        Ok(Box::new(self.create(plugin, role::MAIN, &params, &[], &[])?))
    }

    /// A serializer's reader over a segment.
    pub fn reader(&self, plugin: &str, params: Params, data: &[u8], index: &[u8]) -> Result<Box<dyn ReaderTwin>, Error> {
        Ok(Box::new(self.create(plugin, role::READER, &params, data, index)?))
    }

    /// A commit-log format.
    pub fn log(&self, plugin: &str, params: Params) -> Result<Box<dyn LogTwin>, Error> {
        Ok(Box::new(self.create(plugin, role::MAIN, &params, &[], &[])?))
    }
}

/// An error as the seam takes it; a panic panics here, as a bundled
/// twin's would, which fails the variant with the plugin's message.
fn thrown(plugin: &str, what: &str, called: Called) -> Error {
    match called {
        Called::Error(e) => e,
        Called::Panicked(message) => panic!("native plugin `{plugin}` panicked in {what}: {message}"),
    }
}

/// One instance of a loaded plugin, any kind: the traits below hand each
/// call to it by op.
struct Instance {
    remote: Remote,
    plugin: String,
}

impl Instance {
    fn call(&self, op: u32, what: &str, a: &[u8], b: Option<&[u8]>, n: u64) -> Result<Vec<u8>, Error> {
        self.remote.call(op, a, b, n, None).map_err(|c| thrown(&self.plugin, what, c))
    }

    /// A call whose answer is a packed batch, into `out`.
    fn packed(&self, op: u32, what: &str, a: &[u8], b: Option<&[u8]>, n: u64, out: &mut Packed) -> Result<(), Error> {
        *out = Packed::from_wire(self.call(op, what, a, b, n)?).map_err(|e| self.malformed(what, &e))?;
        Ok(())
    }

    fn malformed(&self, what: &str, e: &Error) -> Error {
        Error::Other(format!("native plugin `{}` answered {what} malformed: {e}", self.plugin))
    }

    /// A call the trait cannot fail: its error panics, as a broken
    /// bundled twin would.
    fn infallible<T>(&self, what: &str, result: Result<T, Error>) -> T {
        result.unwrap_or_else(|e| panic!("native plugin `{}` failed {what}: {e}", self.plugin))
    }

    fn description(&self) -> Description {
        let bytes = self.call(op::DESCRIBE, "describe", &[], None, 0);
        self.infallible("describe", bytes.and_then(|b| decode_description(&b)))
    }

    fn stats(&self) -> Stats {
        let bytes = self.call(op::STATS, "stats", &[], None, 0);
        self.infallible("stats", bytes.and_then(|b| decode_stats(&b)))
    }
}

/// `p`'s wire form for the call, without a copy.
fn lent<R>(p: &mut Packed, f: impl FnOnce(&[u8]) -> R) -> R {
    p.with_wire(|wire| f(wire))
}

impl MemtableTwin for Instance {
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Error> {
        lent(entries, |wire| self.call(op::INSERT, "insert", wire, None, 0)).map(drop)
    }

    fn get(&self, keys: &Packed, out: &mut Packed) {
        let result = self.packed(op::GET, "get", &keys.clone().into_wire(), None, 0, out);
        self.infallible("get", result);
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32, out: &mut Packed) {
        let result = self.packed(op::SCAN, "scan", start, end, u64::from(limit), out);
        self.infallible("scan", result);
    }

    fn open_cursor(&mut self) {
        let result = self.call(op::OPEN_CURSOR, "cursor", &[], None, 0);
        self.infallible("cursor", result);
    }

    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        self.packed(op::NEXT, "next", &[], None, u64::from(max_bytes), out)
    }

    fn description(&self) -> Description {
        Instance::description(self)
    }

    fn stats(&self) -> Stats {
        Instance::stats(self)
    }
}

impl AllocatorTwin for Instance {
    fn store(&mut self, pool: &mut dyn Pool, rows: &mut Packed) -> Result<Vec<u64>, Error> {
        let bytes = lent(rows, |wire| self.remote.call(op::STORE, wire, None, 0, Some(pool))).map_err(|c| thrown(&self.plugin, "store-rows", c))?;
        decode_refs(&bytes).map_err(|e| self.malformed("store-rows", &e))
    }

    fn load(&self, refs: &[u64], out: &mut Packed) -> Result<(), Error> {
        self.packed(op::LOAD, "load", &encode_refs(refs), None, 0, out)
    }

    fn description(&self) -> Description {
        Instance::description(self)
    }

    fn stats(&self) -> Stats {
        Instance::stats(self)
    }
}

impl WriterTwin for Instance {
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        *out = lent(records, |wire| self.call(op::WRITE, "write", wire, None, 0))?;
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let bytes = self.call(op::FINISH, "finish", &[], None, 0)?;
        let (t, finished) = decode_finished(&bytes).map_err(|e| self.malformed("finish", &e))?;
        *tail = t;
        Ok(finished)
    }

    fn description(&self) -> Description {
        Instance::description(self)
    }

    fn stats(&self) -> Stats {
        Instance::stats(self)
    }
}

impl ReaderTwin for Instance {
    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        self.packed(op::NEXT, "reader next", &[], None, u64::from(max_bytes), out)
    }

    fn get(&self, keys: &Packed, out: &mut Packed) -> Result<(), Error> {
        self.packed(op::READER_GET, "reader get", &keys.clone().into_wire(), None, 0, out)
    }
}

impl LogTwin for Instance {
    fn encode(&mut self, rows: &mut Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        *out = lent(rows, |wire| self.call(op::ENCODE, "encode", wire, None, 0))?;
        Ok(())
    }

    fn replay(&self, segment: &[u8], max_rows: u32) -> Replayed {
        let bytes = self.call(op::REPLAY, "replay", segment, None, u64::from(max_rows));
        self.infallible("replay", bytes.and_then(|b| decode_replayed(&b)))
    }

    fn description(&self) -> Description {
        Instance::description(self)
    }

    fn stats(&self) -> Stats {
        Instance::stats(self)
    }
}
