//! Folds what the client and flush threads measured into a variant's
//! result: op counts, latency histograms and the spectrum, the stream's
//! fingerprint, and the flushes' counters and boundary traffic.

use std::collections::HashSet;

use hdrhistogram::Histogram;

use super::client::ClientOutcome;
use crate::flush::FlushReport;
use crate::record::{Failure, FailureClass, FlushFigures, Latency, VariantResult};
use crate::seam::Boundary;
use crate::workload::{Fingerprint, OpKind};

/// What verification needs from the clients: the ops that failed (never
/// acknowledged) and how many ops each thread took.
pub(super) struct Tally {
    pub(super) failed_ops: HashSet<(usize, u64)>,
    pub(super) taken: Vec<u64>,
}

/// Adds the clients' counts, latencies and fingerprints to `result`.
pub(super) fn clients(result: &mut VariantResult, outcomes: &[ClientOutcome]) -> Tally {
    let mut all = histogram();
    let mut per_kind = [histogram(), histogram(), histogram()];
    let mut failed_ops = HashSet::new();
    let (mut fingerprints, mut shapes) = (Vec::new(), Vec::new());
    let mut taken = Vec::new();
    for o in outcomes {
        for (kind, h) in o.histograms.iter().enumerate() {
            let _ = all.add(h);
            let _ = per_kind[kind].add(h);
        }
        for kind in OpKind::ALL {
            *result.op_counts.entry(kind.name().to_string()).or_default() += o.ops[kind as usize];
        }
        result.ops += o.ops.iter().sum::<u64>();
        result.partitions += o.ops[OpKind::Insert as usize];
        result.rows += o.rows;
        result.errors += o.errors;
        result.read_hits += o.read_hits;
        result.scan_rows += o.scan_rows;
        if result.first_error.is_none() {
            result.first_error.clone_from(&o.first_error);
        }
        failed_ops.extend(o.failed_ops.iter().copied());
        fingerprints.push(o.fingerprint);
        shapes.push(o.shape);
        taken.push(o.taken);
        result.client_cpu += o.cpu;
    }
    result.op_counts.retain(|_, n| *n > 0);
    result.partitions = result.partitions.saturating_sub(failed_ops.len() as u64);
    result.latency = Latency::from(&all);
    for kind in OpKind::ALL {
        if !per_kind[kind as usize].is_empty() {
            result.latencies.insert(kind.name().to_string(), Latency::from(&per_kind[kind as usize]));
        }
    }
    result.spectrum = spectrum(&all);
    result.fingerprint = Fingerprint::combine(&fingerprints).to_string();
    result.shape = Fingerprint::combine(&shapes).to_string();
    if result.ops > 0 && result.errors == result.ops {
        let cause = result.first_error.clone().unwrap_or_default();
        result.fail(Failure::new(FailureClass::PluginError, format!("every one of the {} ops failed; the first: {cause}", result.ops)));
    }
    Tally { failed_ops, taken }
}

/// Adds every flush, in generation order, with its counters and traffic.
pub(super) fn flushes(result: &mut VariantResult, mut flushes: Vec<FlushReport>) {
    flushes.sort_by_key(|f| (f.generation, f.part));
    let mut boundary = Boundary::default();
    for f in &flushes {
        for (&kind, stats) in &f.stats {
            let into = result.stats.entry(kind).or_default();
            for (k, v) in stats {
                *into.entry(k.clone()).or_default() += v;
            }
        }
        boundary.add(f.shard_boundary);
        boundary.add(f.serializer_boundary);
    }
    result.boundary = boundary.into();
    result.flushes = flushes.iter().map(FlushFigures::from).collect();
}

pub(crate) fn histogram() -> Histogram<u64> {
    // 1 ns to 1 hour at 3 significant digits; the bounds are constants.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()))
}

/// Percentiles the spectrum chart plots, out to 99.999.
fn spectrum(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut points = Vec::new();
    for nines in 0..=10 {
        // 0, 50, 75, 87.5, ... halving the rest each step, then 99.9...
        let q = 1.0 - 0.5f64.powi(nines);
        points.push((q * 100.0, h.value_at_quantile(q)));
    }
    for q in [0.99, 0.999, 0.9999, 0.99999] {
        points.push((q * 100.0, h.value_at_quantile(q)));
    }
    points.push((100.0, h.max()));
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points.dedup_by(|a, b| a.0 == b.0);
    points
}
