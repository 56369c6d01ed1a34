//! `--cpus`: the process pinned to a fixed set of CPUs before anything
//! runs, so a run's cores are the same from round to round whatever the
//! neighbours do elsewhere; the set is recorded with the run.

use std::fmt::Write as _;

/// The highest CPU number a set may name (the kernel's `CPU_SETSIZE`).
pub const MAX_CPU: usize = 1023;

/// A set of CPUs, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSet(pub Vec<usize>);

/// A set of CPUs as `--cpus` reads it: `0,1`, `0-3`, `0,2-3`.
pub fn parse(text: &str) -> Result<CpuSet, String> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        let number = |s: &str| s.trim().parse::<usize>().ok().filter(|n| *n <= MAX_CPU).ok_or_else(|| format!("`{s}` is not a CPU number (0 to {MAX_CPU})"));
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if lo > hi {
            return Err(format!("`{part}`: a range runs low to high"));
        }
        for cpu in lo..=hi {
            if cpus.contains(&cpu) {
                return Err(format!("CPU {cpu} is named twice"));
            }
            cpus.push(cpu);
        }
    }
    cpus.sort_unstable();
    Ok(CpuSet(cpus))
}

/// The set as the record and the reports write it: `0-1`, `0,2-3`.
pub fn shown(cpus: &[usize]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        let sep = if s.is_empty() { "" } else { "," };
        let _ = if j > i { write!(s, "{sep}{}-{}", cpus[i], cpus[j]) } else { write!(s, "{sep}{}", cpus[i]) };
        i = j + 1;
    }
    s
}

/// Pins every thread of the process to `cpus` (threads started later
/// inherit it), and returns the CPUs the kernel then lets it run on: the
/// ones asked for that this machine has. An error names the CPUs it has.
pub fn pin(cpus: &[usize]) -> Result<Vec<usize>, String> {
    let refused = |e: &dyn std::fmt::Display| format!("--cpus {}: {e} (this machine has CPUs {})", shown(cpus), online());
    let mut set = nix::sched::CpuSet::new();
    for &cpu in cpus {
        set.set(cpu).map_err(|e| refused(&e))?;
    }
    let tasks = std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse::<i32>().ok()) else { continue };
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(tid), &set).map_err(|e| refused(&e))?;
    }
    // Read back, not assumed: `0-1023` on a 2-CPU machine pins to 0-1.
    let got = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).map_err(|e| refused(&e))?;
    Ok((0..nix::sched::CpuSet::count()).filter(|&cpu| got.is_set(cpu).unwrap_or(false)).collect())
}

fn online() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/online").map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::{parse, shown};

    #[test]
    fn a_cpu_list_reads_as_the_kernel_writes_it() {
        assert_eq!(parse("0,1").expect("list").0, [0, 1]);
        assert_eq!(parse("3,0-1").expect("list and range").0, [0, 1, 3]);
        assert_eq!(shown(&parse("0-3,5,7-8").expect("ranges").0), "0-3,5,7-8");
        assert!(parse("1,1").expect_err("twice").contains("named twice"));
        assert!(parse("2-1").expect_err("backwards").contains("low to high"));
        assert!(parse("x").expect_err("not a number").contains("`x`"));
        assert!(parse("4096").is_err());
    }
}
