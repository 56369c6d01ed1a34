//! A variant's commit log, as Cassandra's `commitlog_*` keys name it:
//! the format plugin (`commitlog`, a strategy kind), when writes are
//! durable (`commitlog_sync`), how the files are written
//! (`commitlog_disk_access_mode`) and how large a segment grows
//! (`commitlog_segment_size`). No key: no commit log, as before.

use std::time::Duration;

use serde::Deserialize;

use super::raw::RawSettings;
use crate::commitlog::{Access, SyncMode};

/// `commitlog_sync`, as written (not written: `periodic` when a format
/// is named, else no log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawSync {
    None,
    Periodic,
    Batch,
    Group,
}

pub(super) fn opt_size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    super::raw::byte_size(d).map(Some)
}

/// How the host writes and syncs a variant's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogSettings {
    /// When a write is durable; `SyncMode::None` keeps no log.
    pub sync: SyncMode,
    /// Buffered or direct I/O.
    pub access: Access,
    /// A segment rolls over past this many bytes.
    pub segment_size: u64,
}

/// The format a variant that names only a sync mode logs in.
pub(super) const DEFAULT_FORMAT: &str = "plain";

/// Cassandra's default `commitlog_segment_size`.
pub const DEFAULT_SEGMENT_SIZE: u64 = 32 << 20;
/// The longest period or window a config may ask for.
const MOST_MS: f64 = 60_000.0;

/// A variant's log settings, `format` its `commitlog` key; the
/// offending key and why, when they do not fit together.
pub(super) fn settings(v: &RawSettings, format: bool) -> Result<LogSettings, (&'static str, String)> {
    let ms = |key: &'static str, given: Option<f64>, default: f64| -> Result<Duration, (&'static str, String)> {
        let ms = given.unwrap_or(default);
        if !(ms > 0.0 && ms <= MOST_MS) {
            return Err((key, format!("`{key}` = {ms} must lie in (0, {MOST_MS}] ms")));
        }
        Ok(Duration::from_secs_f64(ms / 1000.0))
    };
    let unused = |key: &'static str, given: Option<f64>, mode: &str| match given {
        Some(_) => Err((key, format!("`{key}` has no effect with `commitlog_sync = \"{mode}\"`"))),
        None => Ok(()),
    };
    let sync = match v.commitlog_sync {
        None if !format => SyncMode::None,
        Some(RawSync::None) => SyncMode::None,
        None | Some(RawSync::Periodic) => {
            unused("commitlog_sync_group_window_ms", v.commitlog_sync_group_window_ms, "periodic")?;
            SyncMode::Periodic(ms("commitlog_sync_period_ms", v.commitlog_sync_period_ms, 10_000.0)?)
        }
        Some(RawSync::Batch) => {
            unused("commitlog_sync_period_ms", v.commitlog_sync_period_ms, "batch")?;
            unused("commitlog_sync_group_window_ms", v.commitlog_sync_group_window_ms, "batch")?;
            SyncMode::Batch
        }
        Some(RawSync::Group) => {
            unused("commitlog_sync_period_ms", v.commitlog_sync_period_ms, "group")?;
            SyncMode::Group(ms("commitlog_sync_group_window_ms", v.commitlog_sync_group_window_ms, 1.0)?)
        }
    };
    if sync == SyncMode::None {
        let stray = [
            ("commitlog_sync_period_ms", v.commitlog_sync_period_ms.is_some()),
            ("commitlog_sync_group_window_ms", v.commitlog_sync_group_window_ms.is_some()),
            ("commitlog_disk_access_mode", v.commitlog_disk_access_mode != super::shape::AccessSetting::Buffered),
            ("commitlog_segment_size", v.commitlog_segment_size.is_some()),
        ];
        if let Some((key, _)) = stray.iter().find(|(_, set)| *set) {
            return Err((key, format!("`{key}` is set, but the variant keeps no commit log: name a format (`commitlog = \"plain\"`)")));
        }
        if format {
            return Err(("commitlog_sync", "`commitlog_sync = \"none\"` keeps no log, so `commitlog` names a format nothing uses".into()));
        }
    }
    let segment_size = v.commitlog_segment_size.unwrap_or(DEFAULT_SEGMENT_SIZE);
    if segment_size > 1 << 30 {
        return Err(("commitlog_segment_size", format!("`commitlog_segment_size` = {segment_size} bytes is above the 1GiB most")));
    }
    Ok(LogSettings { sync, access: v.commitlog_disk_access_mode.into(), segment_size })
}
