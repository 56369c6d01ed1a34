//! Guest stack samples for flame graphs (`--profile`): an engine built to
//! profile advances its epoch every millisecond, and every store's epoch
//! callback captures the running guest's wasm stack, rooted at the plugin
//! it is in. Samples are folded as they come (`root;outer;...;inner`), so
//! memory stays the size of the distinct stacks. Frame names are the
//! guest's own text: cut, and stripped of what the folded format uses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wasmtime::WasmBacktrace;

/// How often a profiling engine's epoch advances: the sampling interval.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(1);

/// Longest frame name kept.
const NAME_CHARS: usize = 160;

/// Distinct stacks kept; past it, samples count under one `[other]` stack.
const MAX_STACKS: usize = 50_000;

/// The samples so far, shared by every store of a profiling engine.
#[derive(Debug, Default)]
pub struct GuestSampler {
    stacks: Mutex<HashMap<String, u64>>,
    samples: AtomicU64,
    sampling_ns: AtomicU64,
}

/// What a profiled round's guests were sampled doing.
#[derive(Debug, Default, Clone)]
pub struct GuestProfile {
    /// Folded stacks and their sample counts, most sampled first.
    pub folded: Vec<(String, u64)>,
    /// Samples taken.
    pub samples: u64,
    /// Time spent taking them.
    pub sampling_ns: u64,
}

/// A frame's name as folded stacks carry it: cut to `NAME_CHARS`, with
/// the separators the format uses (`;` between frames, the space before
/// the count) and control characters replaced. Native profiles use it too.
pub fn folded_frame(name: &str) -> String {
    name.chars()
        .take(NAME_CHARS)
        .map(|c| {
            if c == ';' || c.is_control() {
                '_'
            } else if c == ' ' {
                '\u{a0}'
            } else {
                c
            }
        })
        .collect()
}

fn frame_name(raw: Option<&str>, index: u32) -> String {
    folded_frame(&raw.map_or_else(|| format!("func[{index}]"), |n| format!("{:#}", rustc_demangle::demangle(n))))
}

impl GuestSampler {
    /// Records the stack the store is running, under `root` (the plugin).
    pub(super) fn sample(&self, root: &str, store: impl wasmtime::AsContext) {
        let started = Instant::now();
        let trace = WasmBacktrace::force_capture(store);
        // Frames come innermost first; folded stacks read outermost first.
        let mut stack = folded_frame(root);
        for frame in trace.frames().iter().rev() {
            stack.push(';');
            stack.push_str(&frame_name(frame.func_name(), frame.func_index()));
        }
        {
            let mut stacks = self.stacks.lock().unwrap_or_else(|p| p.into_inner());
            let key = if stacks.len() < MAX_STACKS || stacks.contains_key(&stack) { stack } else { format!("{root};[other]") };
            *stacks.entry(key).or_default() += 1;
        }
        self.samples.fetch_add(1, Ordering::Relaxed);
        self.sampling_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Hands over the samples so far and starts again from none.
    pub fn take(&self) -> GuestProfile {
        let stacks = std::mem::take(&mut *self.stacks.lock().unwrap_or_else(|p| p.into_inner()));
        let mut folded: Vec<(String, u64)> = stacks.into_iter().collect();
        folded.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        GuestProfile { folded, samples: self.samples.swap(0, Ordering::Relaxed), sampling_ns: self.sampling_ns.swap(0, Ordering::Relaxed) }
    }
}
