//! Turning bytes into a checked, compiled plugin.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, InstancePre};

use super::store::StoreCtx;
use super::{Indices, PluginHost, WIT_NAMESPACE, WIT_PACKAGE, cache, interface_name};
use crate::registry;
use crate::seam::{Kind, LoadCause, LoadError};

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Source {
    /// Embedded in the `memlab` binary.
    Bundled,
    /// A file on disk.
    File(String),
}

/// The largest plugin file memlab reads.
pub const MAX_PLUGIN_BYTES: u64 = 256 << 20;

/// A checked, compiled plugin, ready to instantiate many times.
pub struct Plugin {
    /// The name reports use: the bundled name, or the file's path.
    pub name: String,
    /// What it implements.
    pub kind: Kind,
    /// sha256 of the component bytes.
    pub sha256: String,
    /// Where it came from.
    pub source: Source,
    /// Time to compile it, or to load it from the cache.
    pub load_time: Duration,
    /// True when the precompiled cache served it.
    pub cache_hit: bool,
    /// The component's bytes (what `sha256` is of): a run keeps them, so
    /// `memlab verify` never needs the file or crate a record names.
    pub component: Arc<[u8]>,
    pub(crate) pre: InstancePre<StoreCtx>,
    pub(crate) indices: Indices,
    /// `name`, shared: a profiling engine's samples are rooted at it.
    pub(crate) label: Arc<str>,
}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugin").field("name", &self.name).field("kind", &self.kind).field("sha256", &self.sha256).finish_non_exhaustive()
    }
}

const CORE_MAGIC: [u8; 8] = [0, b'a', b's', b'm', 1, 0, 0, 0];
const COMPONENT_MAGIC: [u8; 8] = [0, b'a', b's', b'm', 0x0d, 0, 1, 0];

impl PluginHost {
    /// Loads a plugin by bundled name or path, checking that it is a `kind`.
    pub fn load_as(&self, spec: &str, kind: Kind) -> Result<Arc<Plugin>, LoadError> {
        // Kinds may share a bundled name (`null`): take the one asked for.
        let plugin = match registry::find_kind(spec, kind) {
            Some(bundled) => self.load_bytes(spec, Source::Bundled, bundled.component)?,
            None => self.load(spec)?,
        };
        if plugin.kind != kind {
            return Err(LoadError::new(plugin.name.clone(), LoadCause::WrongKind(kind.to_string(), plugin.kind.to_string())));
        }
        Ok(plugin)
    }

    /// Loads a plugin by bundled name, or else by path.
    pub fn load(&self, spec: &str) -> Result<Arc<Plugin>, LoadError> {
        if let Some(bundled) = registry::find(spec) {
            return self.load_bytes(spec, Source::Bundled, bundled.component);
        }
        let path = PathBuf::from(spec);
        if !path.exists() && !spec.contains('/') && !spec.ends_with(".wasm") {
            return Err(LoadError::new(spec.to_string(), LoadCause::UnknownBundled));
        }
        if path.join("Cargo.toml").is_file() {
            if !self.settings.build_crates {
                return Err(LoadError::new(spec.to_string(), LoadCause::BuildNotAsked));
            }
            let (wasm, bytes) = self.built(spec, &path)?;
            return self.load_bytes(spec, Source::File(wasm.display().to_string()), &bytes);
        }
        let bytes = crate::util::read_bounded(&path, MAX_PLUGIN_BYTES, "plugin file")
            .map_err(|e| LoadError::new(spec.to_string(), LoadCause::Read(path.display().to_string(), e.to_string())))?;
        self.load_bytes(spec, Source::File(path.display().to_string()), &bytes)
    }

    /// The `.wasm` of the crate at `dir` and its bytes, built the first
    /// time it is asked for.
    fn built(&self, spec: &str, dir: &std::path::Path) -> Result<(PathBuf, Arc<[u8]>), LoadError> {
        let key = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        // Held across the build: a second loader of the same crate waits
        // for the first build instead of starting its own.
        let mut built = self.built.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(wasm) = built.get(&key) {
            return Ok(wasm.clone());
        }
        let (wasm, bytes) = super::from_crate::build(spec, dir, super::from_crate::Target::Wasm)?;
        let bytes: Arc<[u8]> = bytes.into();
        built.insert(key, (wasm.clone(), bytes.clone()));
        Ok((wasm, bytes))
    }

    /// The crate at `spec` built for this machine (`--build --native`):
    /// its shared library kept under its sha256, and that sha256, built
    /// the first time it is asked for; `None` when `spec` is no crate
    /// folder.
    pub fn native_build(&self, spec: &str) -> Result<Option<(PathBuf, String)>, LoadError> {
        let dir = std::path::Path::new(spec);
        if !dir.join("Cargo.toml").is_file() {
            return Ok(None);
        }
        if !self.settings.build_crates || !self.settings.native_crates {
            return Err(LoadError::new(spec.to_string(), LoadCause::NativeNotAsked));
        }
        let key = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut built = self.built_native.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(kept) = built.get(&key) {
            return Ok(Some(kept.clone()));
        }
        let (_, bytes) = super::from_crate::build(spec, dir, super::from_crate::Target::Host)?;
        let kept_in = self.settings.cache_dir.as_ref().map_or_else(super::from_crate::private_fallback, |d| d.join("native"));
        let kept = super::from_crate::keep_native(spec, &kept_in, &bytes)?;
        built.insert(key, kept.clone());
        Ok(Some(kept))
    }

    /// Loads a plugin from bytes: a component, or a core module carrying
    /// wit-bindgen's component type (wrapped here with wit-component).
    pub fn load_bytes(&self, name: &str, source: Source, bytes: &[u8]) -> Result<Arc<Plugin>, LoadError> {
        let started = Instant::now();
        self.loads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let component_bytes = to_component(name, bytes)?;
        let sha256 = hex::encode(Sha256::digest(&component_bytes));
        let (component, cache_hit) = cache::compile(&self.engine, self.settings.cache_dir.as_deref(), &sha256, &component_bytes)
            .map_err(|detail| LoadError::new(name.to_string(), LoadCause::Compile(detail)))?;
        let kind = check_interfaces(&self.engine, name, &component)?;
        let pre = self.linker.instantiate_pre(&component).map_err(|e| LoadError::new(name.to_string(), LoadCause::Link(format!("{e:#}"))))?;
        let missing = |e: wasmtime::Error| LoadError::new(name.to_string(), LoadCause::Link(format!("{e:#}")));
        let indices = Indices::new(kind, &pre).map_err(missing)?;
        let component: Arc<[u8]> = Arc::from(component_bytes);
        Ok(Arc::new(Plugin {
            name: name.to_string(),
            kind,
            sha256,
            source,
            load_time: started.elapsed(),
            cache_hit,
            component,
            pre,
            indices,
            label: Arc::from(name),
        }))
    }
}

/// Wraps a core module into a component; passes a component through.
pub fn to_component(name: &str, bytes: &[u8]) -> Result<Vec<u8>, LoadError> {
    let head: [u8; 8] = bytes.get(..8).and_then(|h| h.try_into().ok()).unwrap_or([0; 8]);
    if head == COMPONENT_MAGIC {
        return Ok(bytes.to_vec());
    }
    if head != CORE_MAGIC {
        let shown: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return Err(LoadError::new(name.to_string(), LoadCause::NotWasm(format!("{} bytes, starting {}", bytes.len(), shown.join(" ")))));
    }
    // wit-component assumes a valid module (a truncated one made it panic):
    // validate first, and treat a panic that still escapes as a refusal.
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(bytes)
        .map_err(|e| LoadError::new(name.to_string(), LoadCause::NotWasm(format!("an invalid core module of {} bytes: {e}", bytes.len()))))?;
    let encode = || wit_component::ComponentEncoder::default().module(bytes).and_then(|encoder| encoder.validate(true).encode());
    match std::panic::catch_unwind(encode) {
        Ok(encoded) => encoded.map_err(|e| LoadError::new(name.to_string(), LoadCause::Componentize(format!("{e:#}")))),
        Err(panic) => {
            Err(LoadError::new(name.to_string(), LoadCause::Componentize(format!("wit-component failed: {}", crate::util::panic_message(panic.as_ref())))))
        }
    }
}

/// Refuses foreign imports and wrong versions; returns the one kind exported.
fn check_interfaces(engine: &wasmtime::Engine, name: &str, component: &Component) -> Result<Kind, LoadError> {
    let ty = component.component_type();
    let ours = format!("{WIT_NAMESPACE}/");
    let wrong_version = |item: &str| {
        LoadError::new(
            name.to_string(),
            LoadCause::WrongVersion(format!("{WIT_NAMESPACE}@{}", item.split_once('@').map_or("(no version)", |(_, v)| v)), WIT_PACKAGE.to_string()),
        )
    };
    let allowed_imports = [interface_name("pool"), interface_name("types"), interface_name("diagnostics"), interface_name("output")];
    for (import, _) in ty.imports(engine) {
        if allowed_imports.iter().any(|a| a == import) {
            continue;
        }
        if import.starts_with(&ours) {
            return Err(wrong_version(import));
        }
        return Err(LoadError::new(name.to_string(), LoadCause::ForeignImport(import.to_string())));
    }
    let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let kinds: Vec<Kind> = Kind::ALL.into_iter().filter(|k| exports.contains(&interface_name(k.name()))).collect();
    match kinds.as_slice() {
        [kind] => Ok(*kind),
        [] => match exports.iter().find(|e| e.starts_with(&ours)) {
            Some(other) => Err(wrong_version(other)),
            None => Err(LoadError::new(name.to_string(), LoadCause::NoStrategy(if exports.is_empty() { "nothing".into() } else { exports.join(", ") }))),
        },
        several => Err(LoadError::new(name.to_string(), LoadCause::SeveralKinds(several.iter().map(Kind::to_string).collect::<Vec<_>>().join(", ")))),
    }
}

/// The sha256 of `bytes`, as records name components.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
