//! `variants/` beside `run.json`: the variants a long run finished since
//! the record was last written whole, one file each, and how a reader
//! takes them back, inside the run and each file once.

use std::path::Path;

use super::{BenchResult, RecordError, RunPath, VariantResult};

/// Beside `run.json`: the variants finished since it was last written.
const VARIANTS_DIR: &str = "variants";

impl BenchResult {
    /// Appends the variants saved one by one (`save_variant`) after this
    /// record was last written whole: a run that ended early keeps them.
    /// Each is a name under the run, through the one resolver (`RunPath`),
    /// so neither a file nor `variants/` itself may be a link out of the
    /// run; each is a file of its own, by device and inode, checked before
    /// any is read (a hard link of one record a hundred times is refused,
    /// not read a hundred times). Each must be a variant this record's
    /// config names, as configured; a damaged or foreign one is an error
    /// naming it, never dropped.
    pub(super) fn take_later_variants(&mut self, run_file: &Path) -> Result<(), RecordError> {
        use std::os::unix::fs::MetadataExt;
        let run = run_file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let identity = |path: &Path| std::fs::metadata(path).map(|m| (m.dev(), m.ino()));
        let read_error = |path: &Path, detail: String| RecordError::Read { path: path.display().to_string(), detail };
        let mut seen: std::collections::HashSet<(u64, u64)> = identity(run_file).into_iter().collect();
        let mut files = Vec::new();
        for index in self.variants.len().. {
            let name = RunPath::new(format!("{VARIANTS_DIR}/{index:06}.json"));
            let shown = run.join(name.as_str());
            if std::fs::symlink_metadata(&shown).is_err() {
                break;
            }
            let file = name.under(run).map_err(|e| read_error(&shown, e.detail))?;
            let id = identity(&file).map_err(|e| read_error(&shown, e.to_string()))?;
            if !seen.insert(id) {
                return Err(read_error(&shown, "is the same file as another record of this run (a link); each round is recorded once".into()));
            }
            files.push((shown, file));
        }
        for (shown, file) in files {
            let shown = shown.display().to_string();
            let bytes =
                crate::util::read_bounded(&file, 64 << 20, "variant record").map_err(|e| RecordError::Read { path: shown.clone(), detail: e.to_string() })?;
            let mut variant =
                serde_json::from_slice::<VariantResult>(&bytes).map_err(|e| RecordError::Malformed { path: shown.clone(), detail: e.to_string() })?;
            variant.upgrade();
            if !self.config.variants.contains(&variant.variant) {
                let detail = format!("variant `{}` is not one this record's config ran, as configured", variant.variant.name);
                return Err(RecordError::Malformed { path: shown, detail });
            }
            self.variants.push(variant);
        }
        Ok(())
    }

    /// Writes one finished variant (the `index`-th) beside `run.json`, in
    /// time bounded by its own size: `run.json` itself need not be
    /// rewritten whole after every variant of a long run.
    pub fn save_variant(path: &Path, index: usize, variant: &VariantResult) -> Result<(), RecordError> {
        let dir = path.with_file_name(VARIANTS_DIR);
        let file = dir.join(format!("{index:06}.json"));
        let failed = |e: &dyn std::fmt::Display| RecordError::Write { path: file.display().to_string(), detail: e.to_string() };
        std::fs::create_dir_all(&dir).map_err(|e| failed(&e))?;
        let text = serde_json::to_string(variant).map_err(|e| failed(&e))?;
        crate::util::files::write_whole(&file, text.as_bytes()).map_err(|e| failed(&e))
    }
}
