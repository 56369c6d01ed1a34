//! `memlab new`: a plugin crate of its own, outside memlab's tree, that
//! builds, passes `memlab check`, and benches against the bundled
//! strategies out of the box.

use std::path::{Path, PathBuf};

use crate::seam::Kind;
use crate::seam::KindSpecs;

mod bindings;
pub use bindings::c_bindings;

/// Why a scaffold could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error("`{0}` is not a plugin name: use lowercase letters, digits and `-`, starting with a letter")]
    /// The name is not a plugin name.
    Name(String),
    #[error("{0} already exists: choose another name or directory")]
    /// The crate's folder exists already.
    Exists(String),
    #[error("C bindings for the {kind} world: {detail}")]
    /// The C bindings could not be generated.
    Bindings {
        /// The kind.
        kind: &'static str,
        /// What went wrong.
        detail: String,
    },
    #[error("{path}: {detail}")]
    /// A file could not be written.
    Write {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
}

/// memlab's checkout: where the SDK, the WIT and the profiles are.
fn checkout() -> PathBuf {
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    host.parent().unwrap_or(host).to_path_buf()
}

/// (kind, its `scaffold/KIND.rs.in`); host/build.rs lists one for every kind.
const TEMPLATES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// Writes the crate for a `kind` plugin called `name` into `dir/name`.
pub fn scaffold(kind: Kind, name: &str, dir: &Path) -> Result<PathBuf, ScaffoldError> {
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase()) && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        return Err(ScaffoldError::Name(name.into()));
    }
    let root = std::path::absolute(dir.join(name)).map_err(|e| ScaffoldError::Write { path: dir.display().to_string(), detail: e.to_string() })?;
    if root.exists() {
        return Err(ScaffoldError::Exists(root.display().to_string()));
    }
    let checkout = checkout();
    let file = name.replace('-', "_");
    let source = TEMPLATES.iter().find(|(k, _)| *k == kind.name()).map_or("", |(_, t)| t);
    let (trait_name, bundled) = (kind.spec().sdk_trait, kind.spec().rivals);
    // The new plugin in its kind's place, every other kind's stand-in beside it.
    let variant = |label: &str, plugin: &str| {
        let mut text = format!("[[variant]]\nname = {label:?}\n");
        for other in crate::seam::KINDS.iter() {
            match (other.kind == kind, other.optional) {
                (true, extra) => {
                    text.push_str(&format!("{} = {plugin:?}\n", other.name));
                    extra.into_iter().for_each(|line| text.push_str(&format!("{line}\n")));
                }
                (false, None) => text.push_str(&format!("{} = {:?}\n", other.name, other.stand_in)),
                (false, Some(_)) => {}
            }
        }
        text
    };
    // The crate's folder: memlab builds it before the run.
    // ".": the config's own folder, this crate (paths in a config are
    // taken from its folder).
    let mut variants = vec![variant(name, ".")];
    variants.extend(bundled.iter().map(|b| variant(b, b)));
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{crate}}", name)
            .replace("{{file}}", &file)
            .replace("{{kind}}", kind.name())
            .replace("{{trait}}", trait_name)
            .replace("{{sdk}}", &checkout.join("plugins/sdk").display().to_string())
            .replace("{{checkout}}", &checkout.display().to_string())
            .replace("{{variants}}", &variants.join("\n"))
    };
    let files = [
        ("Cargo.toml", fill(include_str!("scaffold/Cargo.toml.in"))),
        ("src/lib.rs", fill(source)),
        ("README.md", fill(include_str!("scaffold/README.md.in"))),
        ("bench.toml", fill(include_str!("scaffold/bench.toml.in"))),
        // The toolchain memlab is built with, so the crate builds the same.
        ("rust-toolchain.toml", include_str!("../../rust-toolchain.toml").to_string()),
    ];
    // Written beside, then renamed: a failure (a full disk) leaves no
    // half-made crate for the retry to call existing.
    // Under a random name, created exclusively: a folder planted at a
    // name memlab could predict would take the crate's files.
    let parent = root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let made = tempfile::Builder::new().prefix(&format!(".{name}.")).suffix(".partial").tempdir_in(parent);
    let partial = made.map_err(|e| ScaffoldError::Write { path: root.display().to_string(), detail: e.to_string() })?.keep();
    let written = files.into_iter().try_for_each(|(path, text)| {
        let path = partial.join(path);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().unwrap_or(&partial))?;
            crate::util::files::write_whole(&path, text.as_bytes())
        };
        write().map_err(|e| ScaffoldError::Write { path: root.join(path.strip_prefix(&partial).unwrap_or(&path)).display().to_string(), detail: e.to_string() })
    });
    // A crate folder as `mkdir` makes one, not the temporary's 0700.
    let opened = || std::fs::set_permissions(&partial, std::os::unix::fs::PermissionsExt::from_mode(0o755));
    let renamed = written.and_then(|()| {
        opened().and_then(|()| std::fs::rename(&partial, &root)).map_err(|e| ScaffoldError::Write { path: root.display().to_string(), detail: e.to_string() })
    });
    if renamed.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    renamed.map(|()| root)
}
