//! `memlab bindings c`: C bindings for one kind's world, generated from
//! the WIT this memlab was built with by the wit-bindgen library, so a C
//! author needs no wit-bindgen CLI (a 10-minute build) and cannot pick up
//! another version of the contract.

use std::path::{Path, PathBuf};

use wit_bindgen_core::Files;
use wit_bindgen_core::wit_parser::{Resolve, SourceMap};

use super::ScaffoldError;
use crate::seam::Kind;
use crate::seam::KindSpecs;

/// The WIT package, as built into this binary: every file of `wit/`
/// (host/build.rs lists them, so a new interface needs no line here).
const WIT: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/wit_files.rs"));

/// Writes `<world>.h`, `<world>.c` and `<world>_component_type.o` for a
/// `kind` plugin into `dir`, and returns the paths written.
pub fn c_bindings(kind: Kind, dir: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    let bindings = |detail: String| ScaffoldError::Bindings { kind: kind.name(), detail };
    let mut sources = SourceMap::new();
    for (name, text) in WIT {
        sources.push_str(name, *text);
    }
    let group = sources.parse().map_err(|(_, e)| bindings(format!("parsing memlab's WIT: {e}")))?;
    let mut resolve = Resolve::new();
    let package = resolve.push_group(group).map_err(|e| bindings(format!("resolving memlab's WIT: {e}")))?;
    let world_name = kind.spec().world;
    let world = resolve.select_world(&[package], Some(world_name)).map_err(|e| bindings(format!("{e:#}")))?;
    let mut files = Files::default();
    wit_bindgen_c::Opts::default().build().generate(&mut resolve, world, &mut files).map_err(|e| bindings(format!("{e:#}")))?;
    let mut written = Vec::new();
    for (name, contents) in files.iter() {
        let path = dir.join(name);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            crate::util::files::write_whole(&path, contents)
        };
        write().map_err(|e| ScaffoldError::Write { path: path.display().to_string(), detail: e.to_string() })?;
        written.push(path);
    }
    Ok(written)
}
