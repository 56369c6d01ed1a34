//! A plugin caught once is trusted nowhere: a lie may be gated on a
//! parameter, a shard count, a partner or a sweep's value, so the runs
//! where the same binary (by sha256) was not caught prove nothing of it.
//! Within a run, and across the points of a sweep.

use super::sweep::Point;
use super::{BenchResult, Failure, FailureClass, Outcome, VariantResult};

/// A plugin a failed run pinned the failure on, and where.
struct Caught {
    sha256: String,
    plugin: String,
    variant: String,
    /// The sweep point (`threads = 8`), if caught at one.
    point: Option<String>,
    class: FailureClass,
}

impl BenchResult {
    /// Fails every completed run of a variant that loads a plugin (the
    /// same sha256) caught in a lie in another variant, naming the
    /// plugin and where it was caught. Bundled native twins share the
    /// sha256 "native" and are told apart by nothing here, so they are
    /// not tainted by one another.
    pub fn taint_shared_plugins(&mut self) {
        let caught: Vec<Caught> = self.variants.iter().filter_map(|r| caught_in(r, None)).collect();
        taint(self.variants.iter_mut(), None, &caught);
    }
}

/// `taint_shared_plugins` across a sweep: a plugin caught at one point
/// publishes nothing at any point.
pub(super) fn taint_across(over: &str, points: &mut [Point]) {
    let at = |p: &Point| format!("{over} = {}", p.value);
    let caught: Vec<Caught> = points.iter().flat_map(|p| p.result.variants.iter().filter_map(move |r| caught_in(r, Some(at(p))))).collect();
    for p in points.iter_mut() {
        let point = at(p);
        taint(p.result.variants.iter_mut(), Some(&point), &caught);
    }
}

fn taint<'a>(runs: impl Iterator<Item = &'a mut VariantResult>, point: Option<&str>, caught: &[Caught]) {
    if caught.is_empty() {
        return;
    }
    for run in runs {
        if run.failure().is_some() {
            continue;
        }
        let elsewhere = |c: &&Caught| c.variant != run.variant.name || c.point.as_deref() != point;
        let Some(c) = caught.iter().filter(elsewhere).find(|c| run.plugins.iter().any(|p| p.sha256 == c.sha256)) else { continue };
        let short: String = c.sha256.chars().take(12).collect();
        let place = match &c.point {
            Some(at) => format!("variant `{}` at the sweep's point {at}", c.variant),
            None => format!("variant `{}` of this run", c.variant),
        };
        let message = format!("plugin `{}` (sha256 {short}...) broke a rule ({}) in {place}: every variant that loads it publishes nothing", c.plugin, c.class);
        run.outcome =
            Outcome::Failed(Failure { plugin: Some(c.plugin.clone()), sha256: Some(c.sha256.clone()), ..Failure::new(FailureClass::Tainted, message) });
    }
}

/// The plugin a failed run's failure is pinned on, if it is that
/// lie and the plugin is known by its own sha256.
fn caught_in(run: &VariantResult, point: Option<String>) -> Option<Caught> {
    let f = run.failure().filter(|f| f.class.is_a_lie())?;
    let plugin = f.plugin.clone()?;
    let sha256 = f.sha256.clone().or_else(|| run.plugins.iter().find(|p| p.name == plugin).map(|p| p.sha256.clone()))?;
    (sha256 != "native").then(|| Caught { sha256, plugin, variant: run.variant.name.clone(), point, class: f.class })
}
