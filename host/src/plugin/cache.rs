//! Precompiled components, cached by the component's sha256 and the
//! engine's compatibility hash. A cache file is a sha256 over the rest,
//! the sha256 of the component it was compiled from, then the payload.
//! Only a file whose sum holds and whose source is the component asked
//! for is ever deserialized (a flipped bit in native code would crash the
//! process; another plugin's file copied over this one's would run as
//! it); a file that fails either check is recompiled over.
//!
//! Those sums are plain hashes: anyone who may write the folder can
//! recompute them over machine code of their own. So the cache is used
//! only in a folder of this user's alone (`util::files::private_dir`),
//! checked before every read; any other folder is not used at all, said
//! once, and every component is compiled afresh.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

/// `$MEMLAB_CACHE_DIR` (empty disables), else the user's cache directory;
/// used only where it is a folder of this user's alone (`private`).
pub(super) fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MEMLAB_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("memlab"))
}

/// Compiles `bytes`, or loads the cached compilation; the flag says which.
/// The largest compile-cache entry memlab reads (a compiled component).
const MAX_CACHE_ENTRY_BYTES: u64 = 2 << 30;

pub(super) fn compile(engine: &wasmtime::Engine, dir: Option<&Path>, sha256: &str, bytes: &[u8]) -> Result<(Component, bool), String> {
    let Some(dir) = dir.filter(|dir| private(dir)) else {
        return Component::new(engine, bytes).map(|c| (c, false)).map_err(|e| format!("{e:#}"));
    };
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let path = dir.join(format!("{sha256}-{:016x}.cwasm", hasher.finish()));
    if let Ok(file) = crate::input::read(&path, MAX_CACHE_ENTRY_BYTES, "compile cache entry") {
        if let Some(component) = verified(&file, sha256).and_then(|payload| deserialize(engine, payload).ok()) {
            return Ok((component, true));
        }
        // A damaged or stale entry: compile afresh and replace it.
        let _ = std::fs::remove_file(&path);
    }
    let component = Component::new(engine, bytes).map_err(|e| format!("{e:#}"))?;
    // The cache is an optimisation: failing to write it is not an error.
    if let Ok(serialized) = component.serialize() {
        let body = [source_sum(sha256).as_slice(), &serialized].concat();
        let mut file = Sha256::digest(&body).to_vec();
        file.extend_from_slice(&body);
        let _ = crate::util::files::write_whole(&path, &file);
    }
    Ok((component, false))
}

/// A component's hex sha256 as the 32 bytes a cache file holds.
fn source_sum(sha256: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = sha256.get(2 * i..2 * i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(0);
    }
    out
}

/// The payload of a cache file, if its sum holds and it was compiled from
/// the component whose hex sha256 is `source`.
pub fn verified<'f>(file: &'f [u8], source: &str) -> Option<&'f [u8]> {
    let (sum, body) = file.split_at_checked(32)?;
    let (from, payload) = body.split_at_checked(32)?;
    (Sha256::digest(body).as_slice() == sum && from == source_sum(source)).then_some(payload)
}

#[expect(unsafe_code, reason = "wasmtime requires unsafe to load precompiled native code")]
fn deserialize(engine: &wasmtime::Engine, payload: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: `payload` comes from a file in memlab's own cache directory,
    // named by the component's sha256 and this engine's compatibility
    // hash, and its bytes match the sha256 `compile` wrote with them: they
    // are exactly `serialize` output of this engine configuration.
    // wasmtime still checks the header.
    unsafe { Component::deserialize(engine, payload) }
}

/// Whether `dir` is a folder of this user's alone; the first that is not
/// is named on stderr, once a process.
pub(super) fn private(dir: &Path) -> bool {
    static SAID: std::sync::Once = std::sync::Once::new();
    match crate::util::files::private_dir(dir) {
        Ok(()) => true,
        Err(why) => {
            SAID.call_once(|| {
                let why = crate::util::text::for_terminal(&why);
                eprintln!("memlab: not using the cache folder: {why}; memlab loads compiled code and builds only from a folder of yours alone, so every component is compiled afresh (set MEMLAB_CACHE_DIR to a folder of yours)");
            });
            false
        }
    }
}
