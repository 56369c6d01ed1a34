//! A variant's flame graphs, as the record keeps them: which stacks were
//! sampled, where the files are (relative to the run's folder), how many
//! samples, and what the sampling cost. Profiles come from a round of
//! their own after the measured rounds, so no published figure pays for
//! them.

/// What a profile sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileSource {
    /// The wasm guests' own stacks, captured at each epoch tick while a
    /// guest runs.
    Guest,
    /// The whole process's native stacks (SIGPROF), for native twins.
    Native,
}

impl ProfileSource {
    /// What the report says of it.
    pub fn describe(self) -> &'static str {
        match self {
            ProfileSource::Guest => "wasm guest stacks, captured at each epoch tick while a plugin runs (host code not sampled)",
            ProfileSource::Native => "the whole process's native stacks (pprof, SIGPROF): the strategies' twins and the host",
        }
    }
}

/// One flame graph of one variant.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProfileFigures {
    /// The variant profiled.
    pub variant: String,
    /// What was sampled.
    pub source: ProfileSource,
    /// The folded stacks (`frame;frame;frame count` lines).
    pub folded: super::RunPath,
    /// The SVG flame graph drawn from them.
    pub svg: super::RunPath,
    /// Samples taken.
    pub samples: u64,
    /// The sampling interval.
    pub interval_us: u64,
    /// Time spent inside the sampler, measured around each sample (guest
    /// samples only; a signal handler's time cannot be timed from inside).
    pub sampling_ns: u64,
    /// The client threads' time of the profiled round.
    pub client_ns: u64,
    /// The profiled round's steady row rate over the median of the
    /// variant's measured rounds: what profiling cost, all in.
    pub rate_ratio: f64,
}

/// Draws folded stacks as an SVG flame graph: when a profile is taken,
/// and again by the report where a record kept only its folded stacks.
pub fn flame_graph(variant: &str, source: ProfileSource, folded: &str) -> Result<Vec<u8>, String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!(
        "{} ({})",
        crate::util::text::clean(variant),
        match source {
            ProfileSource::Guest => "wasm guest stacks",
            ProfileSource::Native => "native stacks, whole process",
        }
    );
    options.count_name = "samples".into();
    options.deterministic = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg).map_err(|e| format!("drawing the flame graph: {e}"))?;
    Ok(svg)
}

impl ProfileFigures {
    /// The cost, as the report states it.
    pub fn cost(&self) -> String {
        let round = format!("the profiled round ran at {:.2}x the measured rounds' median rate (one unpaired round)", self.rate_ratio);
        match self.source {
            ProfileSource::Guest => {
                format!("{round}; {:.2}% of the client time was spent taking samples", self.sampling_ns as f64 * 100.0 / (self.client_ns as f64).max(1.0))
            }
            ProfileSource::Native => round,
        }
    }
}
