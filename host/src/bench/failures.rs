//! The failure channel of one variant run: any thread (client, flush
//! writer, sampler, watchdog) sends a typed `Failure` and raises the stop
//! flag; the first one sent is the run's failure, later ones its echoes.

use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam::channel::{Receiver, Sender, unbounded};

use crate::record::Failure;

/// The sending side, shared by every thread of the run.
pub(super) struct Failures {
    tx: Sender<Failure>,
    stop: AtomicBool,
}

impl Failures {
    /// A channel and the receiver the run reads the first failure from.
    pub(super) fn new() -> (Failures, Receiver<Failure>) {
        let (tx, rx) = unbounded();
        (Failures { tx, stop: AtomicBool::new(false) }, rx)
    }

    /// Reports a failure and asks every thread to stop.
    pub(super) fn report(&self, failure: Failure) {
        // The receiver lives as long as the run: a send cannot fail then.
        let _ = self.tx.send(failure);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether a failure asked the run to stop.
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
