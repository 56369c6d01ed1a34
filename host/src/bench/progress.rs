//! How a running bench shows itself: cassandra-stress-like interval
//! lines, and a progress bar on a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use super::live::Display;
use crate::record::IntervalSample;

/// The interval lines and the bar of one run.
pub(super) struct Printer<'d> {
    display: &'d Display,
    bar: Option<indicatif::ProgressBar>,
    /// Each line ends with its variant, so lines of many variants can be
    /// told apart (and grepped).
    variant: String,
    cores: f64,
}

impl<'d> Printer<'d> {
    /// Starts the bar (on a terminal) and prints the lines' header.
    pub(super) fn new(display: &'d Display) -> Self {
        let bar = display.total.filter(|_| std::io::stderr().is_terminal()).map(|(len, is_ops)| {
            let bar = indicatif::ProgressBar::new(len);
            let unit = if is_ops { "ops" } else { "ms" };
            bar.set_style(
                indicatif::ProgressStyle::with_template(&format!("{{prefix}} [{{bar:40}}] {{pos}}/{{len}} {unit} {{msg}}"))
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar.set_prefix(crate::util::text::for_terminal(&display.label));
            bar
        });
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let printer = Printer { display, bar, variant: crate::util::text::clean(&display.label), cores };
        if display.lines {
            printer.say(
                format!(
                    "{:<10} {:>10} {:>9} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>7} {:>6} {:>8} {:>5}",
                    "type", "total ops", "op/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time", "errors", "mem MiB", "cpu%"
                ),
                "variant",
            );
        }
        printer
    }

    fn say(&self, line: String, tail: &str) {
        let line = format!("{line}  {tail}");
        match &self.bar {
            Some(bar) => bar.println(line),
            // A closed stdout stops the lines, not the run.
            None => {
                let _ = std::io::Write::write_all(&mut std::io::stdout(), format!("{line}\n").as_bytes());
            }
        }
    }

    /// One interval's line, with the run's totals so far.
    pub(super) fn line(&self, s: &IntervalSample, ops: u64, errors: u64) {
        if !self.display.lines {
            return;
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        self.say(
            format!(
                "{:<10} {:>10} {:>9.0} {:>10.0} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>8.3} {:>7.1} {:>6} {:>8.1} {:>5.0}",
                if s.warmup { "warmup," } else { "total," },
                ops,
                s.op_rate,
                s.row_rate,
                s.latency.mean / 1e6,
                ms(s.latency.p50),
                ms(s.latency.p95),
                ms(s.latency.p99),
                ms(s.latency.p999),
                ms(s.latency.max),
                s.at,
                errors,
                s.memory as f64 / (1 << 20) as f64,
                100.0 * s.cpu / (s.secs * self.cores)
            ),
            &self.variant,
        );
    }

    /// Moves the bar: ops in count mode, else milliseconds.
    pub(super) fn progress(&self, ops: u64, elapsed: Duration, row_rate: f64) {
        if let Some(bar) = &self.bar {
            match self.display.total {
                Some((_, true)) => bar.set_position(ops),
                _ => bar.set_position(elapsed.as_millis() as u64),
            }
            bar.set_message(format!("{row_rate:.0} row/s"));
        }
    }

    /// Clears the bar.
    pub(super) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
