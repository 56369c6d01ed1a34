//! The process's CPU time and peak RSS over a run, and the machine
//! around it (every CPU's busy and stolen time, the load), from `/proc`
//! (Linux; elsewhere the figures read as zero, and no machine).

use std::time::{Duration, Instant};

use crate::record::{Machine, Resources};

/// The machine's CPU time so far, in ticks: (busy, stolen, total), from
/// `/proc/stat`'s first line (user nice system idle iowait irq softirq
/// steal ...), and its online cores.
fn machine_ticks() -> Option<(u64, u64, u64, usize)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let mut lines = stat.lines();
    let fields: Vec<u64> = lines.next()?.strip_prefix("cpu ")?.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    let total: u64 = fields.iter().take(8).sum();
    let idle = at(3) + at(4);
    let cpus = lines.filter(|l| l.starts_with("cpu")).count();
    Some((total.saturating_sub(idle).saturating_sub(at(7)), at(7), total, cpus))
}

fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg").ok().and_then(|l| l.split_whitespace().next()?.parse().ok()).unwrap_or(0.0)
}

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
    started: Instant,
    machine: Option<(u64, u64, u64, usize)>,
}

impl Meter {
    pub(super) fn start() -> Meter {
        // "5" resets the peak RSS to the current RSS (Linux 4.0+).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let (user, system) = cpu();
        Meter { user, system, start_rss: status_bytes("VmRSS:"), started: Instant::now(), machine: machine_ticks() }
    }

    pub(super) fn stop(self) -> Resources {
        let (user, system) = cpu();
        let (user_cpu, system_cpu) = (user.saturating_sub(self.user), system.saturating_sub(self.system));
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        let machine = self.machine.zip(machine_ticks()).map(|((busy0, steal0, total0, cpus), (busy1, steal1, total1, _))| {
            let total = total1.saturating_sub(total0).max(1) as f64;
            Machine {
                cpus,
                cores: (user_cpu + system_cpu).as_secs_f64() / wall,
                // Ticks of every CPU, so their share times the cores.
                busy: busy1.saturating_sub(busy0) as f64 / total * cpus as f64,
                steal: steal1.saturating_sub(steal0) as f64 / total,
                load: load(),
            }
        });
        Resources {
            user_cpu,
            system_cpu,
            machine,
            // A second meter in the process (tests run benches side by
            // side) may have reset the peak below this run's start.
            peak_rss: status_bytes("VmHWM:").max(self.start_rss),
            start_rss: self.start_rss,
        }
    }
}
