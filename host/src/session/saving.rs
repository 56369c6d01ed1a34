//! Where a run's record goes: `run.json` in its directory, or, once that
//! cannot be written (a full disk, a removed directory), a file in the
//! temporary directory, said at once; if that fails too, the record is
//! handed to the progress sink whole at the end.

use std::path::PathBuf;
use std::sync::Arc;

use super::{Event, Progress, SessionError};
use crate::record::BenchResult;

pub(super) struct Saving {
    path: PathBuf,
    fallback: PathBuf,
    failed: Option<String>,
    last: Option<String>,
    progress: Arc<dyn Progress>,
}

impl Saving {
    pub(super) fn new(path: PathBuf, name: &str, progress: Arc<dyn Progress>) -> Self {
        let fallback = std::env::temp_dir().join(format!("memlab-{}-{}.json", name.replace(['/', '\\'], "_"), std::process::id()));
        Saving { path, fallback, failed: None, last: None, progress }
    }

    /// Saves after a variant: the variant alone, and `run.json` whole
    /// while the run is short or as its count doubles (linear in all).
    pub(super) fn save_progress(&mut self, record: &BenchResult) {
        let n = record.variants.len();
        if self.failed.is_none()
            && n > 64
            && !n.is_power_of_two()
            && let Some(v) = record.variants.last()
            && BenchResult::save_variant(&self.path, n - 1, v).is_ok()
        {
            return;
        }
        self.save(record);
    }

    pub(super) fn save(&mut self, record: &BenchResult) {
        if self.failed.is_none() {
            match record.save(&self.path) {
                Ok(()) => return,
                Err(e) => {
                    self.progress.event(Event::RecordMoved { why: &e.to_string(), to: &self.fallback });
                    self.failed = Some(e.to_string());
                }
            }
        }
        self.last = match record.save(&self.fallback) {
            Ok(()) => None,
            Err(_) => serde_json::to_string_pretty(record).ok(),
        };
    }

    /// The error to end with when `run.json` could not be written.
    pub(super) fn lost(self) -> Option<SessionError> {
        let why = self.failed?;
        let saved = match self.last {
            None => self.fallback.display().to_string(),
            Some(json) => {
                self.progress.event(Event::RecordText(&json));
                "standard output, above (the temporary directory could not be written either)".to_string()
            }
        };
        Some(SessionError::NotSaved { path: self.path.display().to_string(), why, saved })
    }
}
