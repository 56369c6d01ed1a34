//! The names a record gives under its run directory (`RunPath`), held
//! when it is read: plain, and each listed once.

use std::collections::BTreeSet;

use super::BenchResult;
use crate::util::text::for_terminal;

impl BenchResult {
    /// Holds every name the record gives under its run to be plain, and
    /// every list a reader walks to name each thing once: a variant round
    /// or a kept log listed twice would be replayed twice, for nothing.
    pub(super) fn check_names(&self) -> Result<(), String> {
        let mut rounds = BTreeSet::new();
        for v in &self.variants {
            let round = format!("variant `{}` (repeat {})", for_terminal(&v.variant.name), v.repeat);
            if !rounds.insert((&v.variant.name, v.repeat)) {
                return Err(format!("{round} is listed twice"));
            }
            let kept = v.commitlog.iter().flat_map(|l| &l.kept).map(|k| &k.file);
            let mut files = BTreeSet::new();
            for (field, name) in v.segments.iter().map(|s| ("segments", s)).chain(kept.map(|f| ("commitlog.kept.file", f))) {
                if !name.plain() {
                    return Err(format!("{round}: its {field} `{name}` is not a relative name inside the run (no root, no `..`)"));
                }
                if field != "segments" && !files.insert(name) {
                    return Err(format!("{round}: its kept log `{name}` is listed twice"));
                }
            }
        }
        for p in &self.profiles {
            if let Some(name) = [&p.folded, &p.svg].into_iter().find(|n| !n.plain()) {
                return Err(format!("profile of `{}`: `{name}` is not a relative name inside the run (no root, no `..`)", for_terminal(&p.variant)));
            }
        }
        Ok(())
    }
}
