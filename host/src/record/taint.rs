//! A plugin caught once is trusted nowhere in the run: a lie may be gated
//! on a parameter, a shard count or a partner, so the variants where the
//! same binary (by sha256) was not caught prove nothing of it.

use super::{BenchResult, Failure, FailureClass, Outcome};

/// A plugin a failed run pinned the failure on.
struct Caught {
    sha256: String,
    plugin: String,
    variant: String,
    class: FailureClass,
}

impl BenchResult {
    /// Fails every completed run of a variant that loads a plugin (the
    /// same sha256) caught in a lie in another variant, naming the
    /// plugin and where it was caught. Bundled native twins share the
    /// sha256 "native" and are told apart by nothing here, so they are
    /// not tainted by one another.
    pub fn taint_shared_plugins(&mut self) {
        let caught: Vec<Caught> = self.variants.iter().filter_map(caught_in).collect();
        if caught.is_empty() {
            return;
        }
        for run in &mut self.variants {
            if run.failure().is_some() {
                continue;
            }
            let found = caught.iter().find(|c| c.variant != run.variant.name && run.plugins.iter().any(|p| p.sha256 == c.sha256));
            if let Some(c) = found {
                let short: String = c.sha256.chars().take(12).collect();
                let message = format!(
                    "plugin `{}` (sha256 {short}...) broke a rule ({}) in variant `{}` of this run: every variant that loads it publishes nothing",
                    c.plugin, c.class, c.variant
                );
                run.outcome =
                    Outcome::Failed(Failure { plugin: Some(c.plugin.clone()), sha256: Some(c.sha256.clone()), ..Failure::new(FailureClass::Tainted, message) });
            }
        }
    }
}

/// The plugin a failed run's failure is pinned on, if it is that
/// lie and the plugin is known by its own sha256.
fn caught_in(run: &super::VariantResult) -> Option<Caught> {
    let f = run.failure().filter(|f| f.class.is_a_lie())?;
    let plugin = f.plugin.clone()?;
    let sha256 = f.sha256.clone().or_else(|| run.plugins.iter().find(|p| p.name == plugin).map(|p| p.sha256.clone()))?;
    (sha256 != "native").then(|| Caught { sha256, plugin, variant: run.variant.name.clone(), class: f.class })
}
