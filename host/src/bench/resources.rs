//! The process's CPU time and peak RSS over a run, from `/proc` (Linux;
//! elsewhere the figures read as zero).

use crate::record::Resources;
use std::time::Duration;

/// Clock ticks per second of `/proc/self/stat` (USER_HZ, 100 on Linux).
const TICKS: u64 = 100;

fn cpu() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which may hold spaces: state is the
    // first, utime the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
    let ticks = |i: usize| Duration::from_millis(fields.get(i).copied().unwrap_or(0) * 1000 / TICKS);
    (ticks(11), ticks(12))
}

fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok()).map_or(0, |kib| kib * 1024)
}

/// Measures from `start` to `stop`.
pub(super) struct Meter {
    user: Duration,
    system: Duration,
    start_rss: u64,
}

impl Meter {
    pub(super) fn start() -> Meter {
        // "5" resets the peak RSS to the current RSS (Linux 4.0+).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let (user, system) = cpu();
        Meter { user, system, start_rss: status_bytes("VmRSS:") }
    }

    pub(super) fn stop(self) -> Resources {
        let (user, system) = cpu();
        Resources {
            user_cpu: user.saturating_sub(self.user),
            system_cpu: system.saturating_sub(self.system),
            // A second meter in the process (tests run benches side by
            // side) may have reset the peak below this run's start.
            peak_rss: status_bytes("VmHWM:").max(self.start_rss),
            start_rss: self.start_rss,
        }
    }
}
