//! Precompiled components, cached by the component's sha256 and the
//! engine's compatibility hash. Only files this module wrote are ever
//! deserialized, and a file that fails to load is recompiled over.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;

/// `$MEMLAB_CACHE_DIR` (empty disables), else the user's cache directory.
pub(super) fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MEMLAB_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("memlab"))
}

/// Compiles `bytes`, or loads the cached compilation; the flag says which.
pub(super) fn compile(engine: &wasmtime::Engine, dir: Option<&Path>, sha256: &str, bytes: &[u8]) -> Result<(Component, bool), String> {
    let Some(dir) = dir else {
        return Component::new(engine, bytes).map(|c| (c, false)).map_err(|e| format!("{e:#}"));
    };
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let path = dir.join(format!("{sha256}-{:016x}.cwasm", hasher.finish()));
    if path.exists() {
        if let Ok(component) = deserialize(engine, &path) {
            return Ok((component, true));
        }
        // A damaged or stale entry: compile afresh and replace it.
        let _ = std::fs::remove_file(&path);
    }
    let component = Component::new(engine, bytes).map_err(|e| format!("{e:#}"))?;
    // The cache is an optimisation: failing to write it is not an error.
    if let Ok(serialized) = component.serialize() {
        let _ = write_atomically(dir, &path, &serialized);
    }
    Ok((component, false))
}

#[expect(unsafe_code, reason = "wasmtime requires unsafe to load precompiled native code")]
fn deserialize(engine: &wasmtime::Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: `path` lies in memlab's own cache directory and is named by
    // the component's sha256 and this engine's compatibility hash; only
    // `write_atomically` below creates such files, from `serialize` output
    // of this same engine configuration. wasmtime still checks the header.
    unsafe { Component::deserialize_file(engine, path) }
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
