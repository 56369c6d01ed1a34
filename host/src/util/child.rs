//! A child process (cargo, building a plugin crate) that a signal to
//! memlab alone stops too: `Command::output` would wait for it, so a
//! supervisor's SIGTERM would wait out a build of minutes.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The signals that stop a child: Ctrl-C, SIGTERM, a closed terminal.
const STOPPING: [i32; 3] = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP];

/// Why a child gave no output.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// It could not be started or waited on.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A signal to memlab stopped it.
    #[error("stopped by a signal to memlab (Ctrl-C, SIGTERM or SIGHUP), and it with it")]
    Stopped,
}

/// Runs `cmd` to its end, as `Command::output` does, in a process group
/// of its own: a signal that would stop memlab (whether memlab's own
/// handlers keep it running or not) stops the whole group, cargo's
/// compilers included, and is answered with `ChildError::Stopped`.
pub fn output(cmd: &mut Command) -> Result<Output, ChildError> {
    let stop = Arc::new(AtomicBool::new(false));
    let ids: Vec<_> = STOPPING.iter().filter_map(|&s| signal_hook::flag::register(s, Arc::clone(&stop)).ok()).collect();
    let result = run(cmd, &stop);
    // Each signal's handling is as it was before: a command with no
    // handlers of its own is ended by the next one again.
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
    result
}

fn run(cmd: &mut Command, stop: &AtomicBool) -> Result<Output, ChildError> {
    let mut child = cmd.process_group(0).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    // Drained as it runs: a full pipe would stall the child.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if stop.load(Ordering::Relaxed) {
            let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM);
            let _ = child.wait();
            return Err(ChildError::Stopped);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    Ok(Output { status, stdout, stderr })
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    #[test]
    fn a_child_runs_to_its_end_with_its_output() {
        let out = super::output(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"])).expect("runs");
        assert_eq!((out.stdout.as_slice(), out.stderr.as_slice(), out.status.code()), (&b"out\n"[..], &b"err\n"[..], Some(3)));
    }
}
