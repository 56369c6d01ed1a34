//! One flush writer thread: flushes the jobs it is handed until the write
//! path closes the queue, and hands back every flush's figures.

use std::path::Path;
use std::time::Instant;

use crossbeam::channel::Receiver;

use super::failures::Failures;
use crate::flush::{self, FlushReport, SerializerFactory};
use crate::pool::MemoryPool;
use crate::record::Failure;
use crate::write_path::FlushJob;

/// A flush writer's inputs.
pub(super) struct FlushWriter<'a> {
    pub(super) jobs: Receiver<FlushJob>,
    pub(super) serializer: &'a SerializerFactory,
    pub(super) dir: &'a Path,
    pub(super) pool: &'a MemoryPool,
    pub(super) run_started: Instant,
    /// Print each flush's "Completed flushing" line.
    pub(super) log: bool,
}

impl FlushWriter<'_> {
    /// Flushes until the queue closes; a failed flush is reported, and the
    /// queue is still drained so that every generation's memory is freed.
    pub(super) fn run(self, failures: &Failures) -> Vec<FlushReport> {
        let mut reports = Vec::new();
        for job in self.jobs {
            job.next.start_ahead();
            let (generation, log) = (job.generation, job.log.clone());
            let flushed = flush::flush(job, self.serializer, self.dir, self.pool, self.run_started);
            // Flushed or failed, the generation no longer needs its log.
            if let Some(Err(e)) = log.map(|log| log.flushed(generation)) {
                failures.report(Failure::from(&crate::seam::SeamError::from(e)));
            }
            match flushed {
                Ok(report) => {
                    if self.log {
                        // A closed stderr stops the lines, not the flush.
                        let line = format!("INFO  {}\n", crate::util::text::for_terminal(&report.log_line()));
                        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                    }
                    reports.push(report);
                }
                Err(e) => failures.report(Failure::from(&e)),
            }
        }
        reports
    }
}
