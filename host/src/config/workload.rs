//! A config's `[workload]`: inline, or a profile file with overrides.

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;
use super::raw::RawWorkload;
use super::text::{key_at, one_line, read_text};
use crate::workload::{Profile, resolve_stream_path};

/// The config's `[workload]`: inline, or a profile file with the table's
/// other top-level keys replacing the file's.
pub(super) fn resolve_workload(file: &str, text: &str, base: &Path, raw: RawWorkload) -> Result<Profile, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { file: file.to_string(), message };
    let mut profile = match raw.profile {
        None => {
            // From the table already parsed; only a refused one is read
            // again from the text, so its error carries its line (a
            // second parse of a large config cost as much as the first).
            let mut p = Profile::deserialize(raw.rest).or_else(|_| {
                #[derive(Deserialize)]
                struct Inline {
                    workload: Profile,
                }
                toml::from_str::<Inline>(text).map(|i| i.workload).map_err(|e| invalid(one_line(text, &e)))
            })?;
            resolve_stream_path(&mut p, base);
            p
        }
        Some(path) if path.is_empty() => return Err(invalid(format!("{}`workload.profile` is empty: name a profile file", key_at(text, "profile")))),
        Some(path) => {
            let path = base.join(path);
            let mut p = load_profile(&path)?;
            if !raw.rest.is_empty() {
                let mut merged = toml::Table::try_from(&p).map_err(|e| invalid(e.to_string()))?;
                merged.extend(raw.rest);
                p = Profile::deserialize(merged).map_err(|e| invalid(format!("[workload] overrides of {}: {}", path.display(), e.message().trim_end())))?;
            }
            p
        }
    };
    if profile.name.is_empty() {
        profile.name = "inline".into();
    }
    profile.validate().map_err(|e| invalid(format!("{}{e}", key_at(text, e.key))))?;
    Ok(profile)
}

/// Reads a profile file (TOML, the profile's keys at top level).
pub fn load_profile(path: &Path) -> Result<Profile, ConfigError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let invalid = |message: String| ConfigError::Invalid { file: file.clone(), message };
    let mut profile: Profile = toml::from_str(&text).map_err(|e| invalid(one_line(&text, &e)))?;
    resolve_stream_path(&mut profile, path.parent().unwrap_or(Path::new(".")));
    if profile.name.is_empty() {
        profile.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    }
    profile.validate().map_err(|e| invalid(format!("{}{e}", key_at(&text, e.key))))?;
    Ok(profile)
}
