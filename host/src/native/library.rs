//! A strategy's native table: linked into the host (a bundled plugin's
//! `MEMLAB_NATIVE`, or a test's), or loaded from a plugin crate built for
//! this machine (`--build --native`, `dlopen`). Either way it is checked
//! the same (ABI, SDK version, kind) and driven the same. Loading one runs
//! its code outside the sandbox: only `--native` asks for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use memlab_sdk::native::{ABI_VERSION, Called, ENTRY_SYMBOL, NativeTable, Remote, SDK_VERSION, Slice};
use memlab_sdk::{Error, Op};

use crate::seam::{Kind, LoadCause, LoadError};

/// The largest native library memlab loads.
const MAX_LIBRARY_BYTES: u64 = 1 << 30;

/// A native table, for as long as the process lives.
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

fn text(slice: Slice) -> String {
    // SAFETY: a table's strings are 'static in its code, never unloaded.
    String::from_utf8_lossy(unsafe { slice.get() }.unwrap_or_default()).into_owned()
}

impl Library {
    /// A table linked into this process, checked as a loaded one is.
    pub fn linked(table: &'static NativeTable) -> Result<Library, String> {
        if table.abi != ABI_VERSION || text(table.sdk) != SDK_VERSION {
            return Err(format!(
                "built with memlab-sdk {} (native ABI {}), but this host is memlab-sdk {SDK_VERSION} (ABI {ABI_VERSION}); rebuild it",
                text(table.sdk),
                table.abi
            ));
        }
        let kind = Kind::from_code(table.kind).ok_or_else(|| format!("its table names kind {}", table.kind))?;
        Ok(Library { table, kind })
    }

    /// Loads the shared library at `path`, named by the `sha256` its bytes
    /// must have, and checks its table. The file is hashed first: one
    /// swapped or planted under that name is refused, never loaded.
    pub fn open(plugin: &str, path: &Path, sha256: &str) -> Result<Library, LoadError> {
        use sha2::Digest as _;
        let fail = |detail: String| LoadError::new(plugin.to_string(), LoadCause::Native(detail));
        let mut loaded = loaded().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(library) = loaded.get(path) {
            return Ok(*library);
        }
        let bytes = crate::input::read(path, MAX_LIBRARY_BYTES, "native library").map_err(|e| fail(e.to_string()))?;
        let found = hex::encode(sha2::Sha256::digest(&bytes));
        if found != sha256 {
            return Err(fail(format!(
                "{} has sha256 {found}, but memlab built and kept {sha256}: it is not memlab's build, so it is not loaded",
                path.display()
            )));
        }
        // SAFETY: loading runs the library's initialisers: the user asked
        // for this crate's code to run natively (`--native`).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| fail(format!("{}: {e}", path.display())))?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        // SAFETY: the SDK's `export!` defines the symbol with this type.
        let entry = unsafe { lib.get::<unsafe extern "C" fn() -> *const NativeTable>(ENTRY_SYMBOL) }
            .map_err(|e| fail(format!("no memlab entry ({e}): does it call `memlab_sdk::export!` with memlab-sdk {SDK_VERSION}?")))?;
        // SAFETY: as above; the table it returns is static in the library.
        let table = unsafe { entry().as_ref() }.ok_or_else(|| fail("its entry returned no table".into()))?;
        let library = Library::linked(table).map_err(fail)?;
        loaded.insert(path.to_path_buf(), library);
        Ok(library)
    }

    /// The strategy's name, as it names itself.
    pub fn name(&self) -> String {
        text(self.table.name)
    }

    /// An instance of what `op` creates, for `plugin`.
    pub(super) fn create(&self, plugin: &str, op: Op, params: &[(String, String)], a: &[u8], b: &[u8]) -> Result<Remote, Error> {
        // SAFETY: `linked` checked the table's ABI, and its code is never
        // unloaded (linked, or leaked by `open`).
        unsafe { Remote::create(self.table, op, params, a, b) }.map_err(|c| thrown(plugin, op, c))
    }
}

/// An error as the seam takes it; a panic panics here, as a native
/// panic always has, which fails the variant with the plugin's message.
pub(super) fn thrown(plugin: &str, op: Op, called: Called) -> Error {
    match called {
        Called::Error(e) => e,
        Called::Panicked(message) => panic!("native plugin `{plugin}` panicked in {op}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::Library;

    #[test]
    fn a_library_whose_bytes_are_not_the_kept_build_is_never_loaded() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("lib.so");
        std::fs::write(&path, b"planted").expect("plant");
        let kept = "0".repeat(64);
        let Err(refused) = Library::open("p", &path, &kept) else { panic!("a planted library was loaded") };
        let planted = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"planted"));
        let refused = refused.to_string();
        assert!(refused.contains(&planted) && refused.contains(&kept) && refused.contains("not loaded"), "{refused}");
    }
}
