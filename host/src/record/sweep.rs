//! A sweep as its records make it: the points of one `[sweep]`, each a
//! record of its own, merged by the sweep's identity. Points may be run
//! apart (`--points`, other machines) and merged by `memlab show a/ b/`.

use super::{BenchResult, SweepSpec, VariantResult};

/// One sweep, its points in the config's order.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// What varies.
    pub over: String,
    /// Every value the config lists.
    pub values: Vec<String>,
    /// The sweep's identity.
    pub id: String,
    /// The points recorded, each with where it was read from.
    pub points: Vec<Point>,
}

/// One recorded point.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its value.
    pub value: String,
    /// Where its record was read from.
    pub source: String,
    /// The record.
    pub result: BenchResult,
}

/// Records that cannot be merged into one sweep.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// No record at all.
    #[error("no sweep point to show")]
    Empty,
    /// A record that is no sweep's point.
    #[error("{0}: not a sweep point (its config has no `[sweep]`); show it alone")]
    NotAPoint(String),
    /// Points of two experiments.
    #[error("{first} and {other} are points of different sweeps ({sweeps}): the configs differ in more than the swept values")]
    Different {
        /// One point's record.
        first: String,
        /// The other point's record.
        other: String,
        /// Both sweeps' identities.
        sweeps: String,
    },
    /// The same point twice.
    #[error("{first} and {other} both hold the point {over} = {value}: show one of them")]
    Twice {
        /// One point's record.
        first: String,
        /// The other point's record.
        other: String,
        /// The swept knob.
        over: String,
        /// The value.
        value: String,
    },
    /// Points whose plugins are not the same components.
    #[error("{first} and {other} ran different components for {detail}: the points are not one experiment")]
    Plugins {
        /// One point's record.
        first: String,
        /// The other point's record.
        other: String,
        /// How they differ.
        detail: String,
    },
    /// Points that should share a stream and do not.
    #[error("{first} and {other} ran different streams ({a} and {b}), though the sweep over `{over}` does not change the stream")]
    PointStreams {
        /// One point's record.
        first: String,
        /// The other point's record.
        other: String,
        /// The swept knob.
        over: String,
        /// One point's stream print, named (its shape).
        a: String,
        /// The other point's.
        b: String,
    },
    /// A point whose variants did not all see one stream.
    #[error("{source_}: its variants ran different streams (fingerprints {a} and {b}); the point cannot be compared")]
    Streams {
        /// The point's record.
        source_: String,
        /// One variant's stream fingerprint.
        a: String,
        /// Another's.
        b: String,
    },
}

fn spec(source: &str, r: &BenchResult) -> Result<SweepSpec, SweepError> {
    r.config.sweep.clone().ok_or_else(|| SweepError::NotAPoint(source.to_string()))
}

/// Merges records (each with where it was read) into one sweep.
pub fn merge(records: Vec<(String, BenchResult)>) -> Result<Sweep, SweepError> {
    let mut sweep: Option<Sweep> = None;
    for (source, result) in records {
        let s = spec(&source, &result)?;
        let fingerprints: Vec<&str> = result.variants.iter().filter(|v| v.failure().is_none()).map(|v| v.fingerprint.as_str()).collect();
        if let Some(b) = fingerprints.iter().find(|f| **f != fingerprints[0]) {
            return Err(SweepError::Streams { source_: source, a: fingerprints[0].to_string(), b: b.to_string() });
        }
        let into = sweep.get_or_insert_with(|| Sweep { over: s.over.clone(), values: s.values.clone(), id: s.id.clone(), points: Vec::new() });
        if s.id != into.id || s.over != into.over {
            let first = into.points.first().map(|p| p.source.clone()).unwrap_or_default();
            let sweeps = format!("over `{}`, id {:.12}; over `{}`, id {:.12}", into.over, into.id, s.over, s.id);
            return Err(SweepError::Different { first, other: source, sweeps });
        }
        if let Some(first) = into.points.first() {
            same_experiment(first, &source, &result, &s.over)?;
        }
        if let Some(twice) = into.points.iter().find(|p| p.value == s.value) {
            return Err(SweepError::Twice { first: twice.source.clone(), other: source, over: s.over, value: s.value });
        }
        into.points.push(Point { value: s.value, source, result });
    }
    let mut sweep = sweep.ok_or(SweepError::Empty)?;
    let values = sweep.values.clone();
    sweep.points.sort_by_key(|p| values.iter().position(|v| *v == p.value).unwrap_or(usize::MAX));
    super::taint::taint_across(&sweep.over, &mut sweep.points);
    Ok(sweep)
}

/// (variant, kind) → sha256 of every plugin a record ran.
fn components(r: &BenchResult) -> std::collections::BTreeMap<(String, String), String> {
    r.variants.iter().flat_map(|v| v.plugins.iter().map(|p| ((v.variant.name.clone(), p.kind.to_string()), p.sha256.clone()))).collect()
}

/// A point must have run the first point's components, and, unless the
/// sweep changes the stream (threads, rows per batch), its stream.
fn same_experiment(first: &Point, source: &str, result: &BenchResult, over: &str) -> Result<(), SweepError> {
    let (theirs, ours) = (components(&first.result), components(result));
    for ((variant, kind), a) in &theirs {
        if let Some(b) = ours.get(&(variant.clone(), kind.clone())).filter(|b| *b != a) {
            let detail = format!("variant `{variant}`'s {kind} (sha256 {a:.12} and {b:.12})");
            return Err(SweepError::Plugins { first: first.source.clone(), other: source.to_string(), detail });
        }
    }
    // Points are runs of their own, each salted apart: they share a shape.
    let stream = |r: &BenchResult| r.variants.iter().find(|v| v.failure().is_none()).map(VariantResult::stream_print);
    if !matches!(over, "threads" | "rows_per_batch")
        && let (Some(a), Some(b)) = (stream(&first.result), stream(result))
        && a != b
    {
        return Err(SweepError::PointStreams { first: first.source.clone(), other: source.to_string(), over: over.to_string(), a, b });
    }
    Ok(())
}

impl Sweep {
    /// The variants' names, in the first point's order.
    pub fn variants(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for p in &self.points {
            for (name, _) in super::verdict::by_variant(&p.result) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        names
    }

    /// Values the config lists that no record holds.
    pub fn missing(&self) -> Vec<&str> {
        self.values.iter().filter(|v| !self.points.iter().any(|p| p.value == **v)).map(String::as_str).collect()
    }
}
