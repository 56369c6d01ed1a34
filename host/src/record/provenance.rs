//! Where, when and with what a run happened, so a saved run can be
//! trusted and reproduced: machine, OS, CPU, versions, engine settings,
//! every plugin's sha256, the stream's fingerprint.

use std::collections::BTreeMap;

use super::VariantResult;

/// A run's provenance.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Provenance {
    /// memlab's version.
    pub memlab_version: String,
    /// The git commit memlab was built from.
    pub git_commit: String,
    /// wasmtime's version.
    pub wasmtime_version: String,
    /// When the bench finished, seconds since the Unix epoch.
    pub finished_unix: u64,
    /// The machine's host name.
    pub hostname: String,
    /// OS name and kernel release.
    pub os: String,
    /// CPU model.
    pub cpu: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// Engine settings in force.
    pub engine: EngineInfo,
    /// Plugin name → sha256 of every plugin used ("native" for twins).
    pub plugins: BTreeMap<String, String>,
    /// The stream's fingerprint (every run's, when they agree).
    pub stream_fingerprint: String,
    /// Its shape print (every run's, when they agree): what two runs of
    /// one config share whatever their salts.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stream_shape: String,
    /// The salt that keyed the stream's content, written once the run is
    /// over (`memlab bench --salt` replays it); none for a stream file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_salt: Option<String>,
}

/// The wasm engine as configured.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct EngineInfo {
    /// Per-call deadline in milliseconds, if on.
    pub call_deadline_ms: Option<f64>,
    /// Memory cap per instance in bytes.
    pub memory_cap: u64,
    /// Wasm stack limit in bytes.
    pub stack_limit: usize,
    /// Whether compiled plugins are cached on disk.
    pub cache: bool,
}

/// A stream's shape print, named, or its fingerprint where a record
/// predates shapes (a stream file's replay has a shape too: its bytes').
pub(super) fn stream_print(shape: &str, fingerprint: &str) -> String {
    if shape.is_empty() { format!("fingerprint {fingerprint}") } else { format!("shape {shape}") }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl Provenance {
    /// What comparisons across runs hold the stream to, named: its shape
    /// print, or, in a record from before streams were salted, its
    /// fingerprint.
    pub fn stream_print(&self) -> String {
        stream_print(&self.stream_shape, &self.stream_fingerprint)
    }

    /// Collects what the machine and the runs say, beside the engine's
    /// settings as the caller read them.
    pub fn collect(engine: EngineInfo, runs: &[VariantResult]) -> Provenance {
        let os_release = read("/etc/os-release");
        let os_name = os_release.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).unwrap_or("unknown").trim_matches('"');
        let cpuinfo = read("/proc/cpuinfo");
        let cpu = cpuinfo.lines().find_map(|l| l.strip_prefix("model name")).and_then(|l| l.split_once(':')).map_or("unknown", |(_, m)| m.trim());
        let memory_kib: u64 =
            read("/proc/meminfo").lines().find_map(|l| l.strip_prefix("MemTotal:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0);
        let joined = |print: fn(&VariantResult) -> &str| {
            let mut prints: Vec<&str> = runs.iter().map(print).filter(|p| !p.is_empty()).collect();
            prints.dedup();
            prints.join(" / ")
        };
        Provenance {
            memlab_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("MEMLAB_GIT_COMMIT").into(),
            wasmtime_version: env!("MEMLAB_WASMTIME_VERSION").into(),
            finished_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            os: format!("{os_name}, Linux {}", read("/proc/sys/kernel/osrelease").trim()),
            cpu: cpu.to_string(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: memory_kib * 1024,
            engine,
            plugins: runs.iter().flat_map(|r| r.plugins.iter().map(|p| (p.name.clone(), p.sha256.clone()))).collect(),
            stream_fingerprint: joined(|r| &r.fingerprint),
            stream_shape: joined(|r| &r.shape),
            stream_salt: None,
        }
    }
}
