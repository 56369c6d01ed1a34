//! A run's directory: created up front, so an unwritable `--out` fails
//! first and two runs never share one; the components it keeps.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::{SessionError, io};
use crate::config::BenchConfig;
use crate::plugin::PluginHost;
use crate::registry;

/// Where a run keeps the components of its plugins that are not bundled,
/// by sha256: `memlab verify` reads segments back with these bytes, never
/// with a file or a crate the record names.
pub const KEPT_COMPONENTS: &str = "components";

/// Copies every non-bundled plugin's component into the run's directory.
pub(super) fn keep_components(host: &Arc<PluginHost>, config: &BenchConfig, run_dir: &Path) -> Result<(), SessionError> {
    for v in config.variants.iter().filter(|v| v.runtime == crate::config::Runtime::Wasm) {
        for (kind, strategy) in v.strategies() {
            if registry::find_kind(strategy.plugin, kind).is_some() {
                continue;
            }
            let plugin = host.load_as(strategy.plugin, kind)?;
            let dir = run_dir.join(KEPT_COMPONENTS);
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let path = dir.join(format!("{}.wasm", plugin.sha256));
            crate::util::files::write_whole(&path, &plugin.component).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// `<out>/<UTC time>-<name>` (`20261202T124000Z-default`), so `ls` lists
/// runs oldest first, or with `-2`, `-3`... when a run in the same second
/// took it; created here, so an unwritable `out` fails first.
pub(super) fn create(out: &Path, name: &str) -> Result<PathBuf, SessionError> {
    std::fs::create_dir_all(out).map_err(|e| SessionError::Out { path: out.display().to_string(), detail: e.to_string() })?;
    let stamp = utc_stamp(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0));
    for n in 1..1000 {
        let dir = out.join(if n == 1 { format!("{stamp}-{name}") } else { format!("{stamp}-{name}-{n}") });
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(SessionError::Out { path: dir.display().to_string(), detail: e.to_string() }),
        }
    }
    Err(SessionError::Out { path: out.display().to_string(), detail: "a thousand runs of this name started this second".into() })
}

/// `YYYYMMDDTHHMMSSZ` for seconds since the epoch.
fn utc_stamp(secs: u64) -> String {
    let at = i64::try_from(secs).ok().and_then(|s| jiff::Timestamp::from_second(s).ok()).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    at.strftime("%Y%m%dT%H%M%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::utc_stamp;

    #[test]
    fn run_directories_are_named_by_utc_time() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        assert_eq!(utc_stamp(1_796_215_200), "20261202T124000Z");
        assert_eq!(utc_stamp(4_102_444_799), "20991231T235959Z");
    }
}
