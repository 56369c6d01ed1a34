//! Memtable properties: differential against the reference model (gets,
//! scans, overwrites, equal timestamps, empty and 64 KiB keys), the
//! cursor's order and freeze, stats sanity, `describe`, unknown params.

use std::sync::Arc;

use memlab_sdk::{Entry, Packed, Stat};

use super::{CheckOptions, Properties, Property, ShardSubject, key, rounds};
use crate::model::ReferenceMemtable;
use crate::plugin::{Plugin, PluginHost};
use crate::seam::show_key;
use crate::workload::SplitMix;

/// Ops per round: each round is a fresh instance, so a failure shrinks
/// against at most this many.
const PER_ROUND: u64 = 20_000;

#[derive(Debug, Clone)]
enum Step {
    Insert(Vec<(Vec<u8>, u64, u64)>),
    Get(Vec<Vec<u8>>),
    Scan(Vec<u8>, Option<Vec<u8>>, u32),
}

impl Step {
    /// Ops the step counts for: one per key, one per scan.
    fn ops(&self) -> u64 {
        match self {
            Step::Insert(e) => e.len() as u64,
            Step::Get(k) => k.len() as u64,
            Step::Scan(..) => 1,
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Insert(e) => {
                let shown: Vec<String> = e.iter().map(|(k, t, r)| format!("{} ts {t} ref {r}", show_key(k))).collect();
                write!(f, "insert [{}]", shown.join(", "))
            }
            Step::Get(keys) => write!(f, "get [{}]", keys.iter().map(|k| show_key(k)).collect::<Vec<_>>().join(", ")),
            Step::Scan(s, e, l) => write!(f, "scan from {} to {} limit {l}", show_key(s), e.as_deref().map_or("the end".into(), show_key)),
        }
    }
}

fn steps(seed: u64, ops: u64) -> Vec<Step> {
    if super::bench_like::round_is_bench_like(seed) {
        return bench_steps(seed, ops);
    }
    let mut rng = SplitMix::new(&[seed]);
    let (mut out, mut done, mut reference) = (Vec::new(), 0, 0u64);
    while done < ops {
        let step = match rng.below(10) {
            0..=6 => Step::Insert(
                (0..1 + rng.below(32))
                    .map(|_| {
                        reference += 1;
                        // Timestamps from a small range make ties common.
                        (key(&mut rng), rng.below(64), reference)
                    })
                    .collect(),
            ),
            7 | 8 => Step::Get((0..1 + rng.below(16)).map(|_| key(&mut rng)).collect()),
            _ => {
                let (a, b) = (key(&mut rng), key(&mut rng));
                let (start, end) = if a <= b { (a, b) } else { (b, a) };
                Step::Scan(start, (rng.below(4) != 0).then_some(end), rng.below(200) as u32)
            }
        };
        done += step.ops();
        out.push(step);
    }
    out
}

/// Steps a bench could have sent one shard: its rows' sort keys and
/// timestamps, gets of keys written and not, scans from a partition's start.
fn bench_steps(seed: u64, ops: u64) -> Vec<Step> {
    let mut rng = SplitMix::new(&[seed, 0x57e9]);
    let mut source = super::bench_like::BenchLike::new(seed);
    let (mut out, mut done, mut reference) = (Vec::new(), 0, 0u64);
    let mut written: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    while done < ops {
        let step = match rng.below(10) {
            0..=6 => Step::Insert(
                (0..1 + rng.below(32))
                    .map(|_| {
                        reference += 1;
                        let row = source.next_row();
                        written.push((row.key.clone(), row.partition_start));
                        (row.key, row.timestamp, reference)
                    })
                    .collect(),
            ),
            7 | 8 => Step::Get(
                (0..1 + rng.below(16))
                    .map(|_| match written.len() {
                        0 => source.next_row().key,
                        n if rng.below(4) != 0 => written[rng.below(n as u64) as usize].0.clone(),
                        _ => source.next_row().key,
                    })
                    .collect(),
            ),
            _ => {
                let start = if written.is_empty() { Vec::new() } else { written[rng.below(written.len() as u64) as usize].1.clone() };
                Step::Scan(start, None, 1 + rng.below(100) as u32)
            }
        };
        done += step.ops();
        out.push(step);
    }
    out
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(240) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line.to_string(),
    }
}

fn entries_of(p: &Packed) -> Result<Vec<(Vec<u8>, u64, u64)>, String> {
    p.iter().map(|r| Entry::decode(r).map(|e| (e.key.to_vec(), e.timestamp, e.reference)).map_err(|e| e.to_string())).collect()
}

impl ShardSubject<'_> {
    /// Replays `steps` against a fresh instance and the model; the index of
    /// the first step whose answer differs, and how.
    fn replay_steps(&self, steps: &[Step], cursor: bool) -> Result<(), (usize, String)> {
        let mut shard = self.shard(self.params).map_err(|e| (0, e.to_string()))?;
        let mut model = ReferenceMemtable::default();
        for (i, step) in steps.iter().enumerate() {
            replay_step(&mut shard, &mut model, step).map_err(|what| (i, what))?;
        }
        if cursor {
            let at = steps.len();
            cursor_holds(&mut shard, &model).map_err(|what| (at, what))?;
        }
        Ok(())
    }
}

/// One step on the plugin and the model alike; a difference is an error.
fn replay_step(shard: &mut crate::seam::Shard, model: &mut ReferenceMemtable, step: &Step) -> Result<(), String> {
    match step {
        Step::Insert(batch) => {
            let mut p = Packed::new();
            for (k, t, r) in batch {
                p.push_with(|buf| Entry { key: k, timestamp: *t, reference: *r }.encode(buf));
                model.insert(k, *t, *r);
            }
            shard.insert(&mut p).map_err(|e| e.to_string())
        }
        Step::Get(keys) => {
            let mut p = Packed::new();
            keys.iter().for_each(|k| p.push(k));
            let got = shard.get(p).map_err(|e| e.to_string())?;
            if got.len() != keys.len() {
                return Err(format!("get of {} keys returned {} records", keys.len(), got.len()));
            }
            for (k, record) in keys.iter().zip(got.iter()) {
                let have = if record.is_empty() {
                    None
                } else {
                    let e = Entry::decode(record).map_err(|e| e.to_string())?;
                    if e.key != k.as_slice() {
                        return Err(format!("get {} answered for key {}", show_key(k), show_key(e.key)));
                    }
                    Some((e.timestamp, e.reference))
                };
                if have != model.get(k) {
                    return Err(format!("get {}: plugin says {have:?}, the model {:?}", show_key(k), model.get(k)));
                }
            }
            Ok(())
        }
        Step::Scan(start, end, limit) => {
            let got = shard.scan(start, end.as_deref(), *limit).map_err(|e| e.to_string())?;
            let got = entries_of(&got)?;
            let want = model.scan(start, end.as_deref(), *limit as usize);
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                return Err(format!("scan returned {} entries, the model {} (first difference at {at})", got.len(), want.len()));
            }
            Ok(())
        }
    }
}

/// The cursor gives the model's entries in order; a second cursor starts
/// over, reads after the freeze answer from the frozen state (contract 5),
/// and an insert after it is refused.
fn cursor_holds(shard: &mut crate::seam::Shard, model: &ReferenceMemtable) -> Result<(), String> {
    shard.open_cursor().map_err(|e| e.to_string())?;
    let mut all = Vec::new();
    loop {
        let batch = shard.next_entries(4096).map_err(|e| e.to_string())?;
        if batch.is_empty() {
            break;
        }
        all.extend(entries_of(&batch)?);
    }
    if all != model.all() {
        return Err(format!("the cursor gave {} entries, the model holds {}", all.len(), model.len()));
    }
    shard.open_cursor().map_err(|e| e.to_string())?;
    let first = shard.next_entries(4096).map_err(|e| e.to_string())?;
    let first = entries_of(&first)?;
    if !all.starts_with(&first) {
        return Err(format!("a second cursor did not start over: its first {} entries differ from the first cursor's", first.len()));
    }
    if let Some((key, timestamp, reference)) = all.first() {
        let mut keys = Packed::new();
        keys.push(key);
        let answer = shard.get(keys).map_err(|e| e.to_string())?;
        if entries_of(&answer)?.first() != Some(&(key.clone(), *timestamp, *reference)) {
            return Err(format!("a get of {} after the freeze did not answer its entry", show_key(key)));
        }
    }
    let mut late = Packed::new();
    late.push_with(|buf| Entry { key: b"late", timestamp: 1, reference: 1 }.encode(buf));
    match shard.insert(&mut late) {
        Err(e) if matches!(e.guest_error(), Some(memlab_sdk::Error::InvalidState(_))) => Ok(()),
        other => Err(format!("an insert after the cursor opened gave {other:?}, not invalid-state")),
    }
}

/// Removes chunks of steps, then entries within inserts, while the
/// failure persists; at most `budget` replays.
fn shrink(subject: &ShardSubject<'_>, mut steps: Vec<Step>, cursor: bool, mut budget: u32) -> Vec<Step> {
    let mut fails = |s: &[Step]| {
        budget = budget.saturating_sub(1);
        budget > 0 && subject.replay_steps(s, cursor).is_err()
    };
    let mut chunk = steps.len() / 2;
    while chunk >= 1 {
        let mut at = 0;
        while at < steps.len() {
            let mut trial = steps.clone();
            trial.drain(at..(at + chunk).min(trial.len()));
            if !trial.is_empty() && fails(&trial) {
                steps = trial;
            } else {
                at += chunk;
            }
        }
        chunk /= 2;
    }
    for i in 0..steps.len() {
        let mut j = 0;
        while let Step::Insert(batch) = &steps[i] {
            if j >= batch.len() || batch.len() == 1 {
                break;
            }
            let mut trial = steps.clone();
            if let Step::Insert(b) = &mut trial[i] {
                b.remove(j);
            }
            if fails(&trial) {
                steps = trial;
            } else {
                j += 1;
            }
        }
    }
    steps
}

pub(super) fn check(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, options: &CheckOptions) -> Properties {
    let properties = Properties::new(options.only.as_deref());
    let subject = match ShardSubject::new(host, plugin, options) {
        Ok(s) => s,
        Err(failed) => return properties.stopped(failed),
    };
    if let Err(e) = subject.shard(subject.params) {
        return properties.stopped(Property::fail("create", format!("{e} (with the parameters given; nothing else was checked)")));
    }
    let mut properties = properties;
    subject.common_properties(&mut properties);
    properties.holds("differential+cursor", || differential(&subject, options));
    properties.holds("stats", || stats(&subject, options.seed));
    properties.holds(super::AT_SIZE, || super::at_size::memtable(&subject, options.size, options.seed));
    properties
}

/// Seeded rounds of inserts, gets and scans against the reference, each
/// round's cursor read whole; a failure shrunk to a few steps.
fn differential(subject: &ShardSubject<'_>, options: &CheckOptions) -> Result<String, String> {
    rounds(options, PER_ROUND, |seed, ops| {
        subject.draw_from(seed, super::ROUND_NEED);
        let steps = steps(seed, ops);
        let Err((at, what)) = subject.replay_steps(&steps, true) else { return Ok(()) };
        let cursor_failure = at == steps.len();
        let shrunk = shrink(subject, steps[..at.min(steps.len() - 1) + 1].to_vec(), cursor_failure, 2_000);
        let mut case: Vec<String> = shrunk.iter().take(12).map(|s| format!("  {}", clip(&s.to_string()))).collect();
        if shrunk.len() > 12 {
            case.push(format!("  ... and {} more steps", shrunk.len() - 12));
        }
        let end = if cursor_failure { "\n  then open the cursor and read it all" } else { "" };
        Err(format!("{what}\nshrunk to {} steps on a fresh instance:\n{}{end}", shrunk.len(), case.join("\n")))
    })
}

/// `entries` counts at least the distinct keys and at most the inserts;
/// `index-bytes` is non-zero once anything is held.
fn stats(subject: &ShardSubject<'_>, seed: u64) -> Result<String, String> {
    let steps = steps(seed ^ 0x57a7, 5_000);
    subject.draw_from(seed ^ 0x57a7, super::ROUND_NEED);
    let mut shard = subject.shard(subject.params).map_err(|e| e.to_string())?;
    let (mut model, mut inserts) = (ReferenceMemtable::default(), 0u64);
    for step in &steps {
        if let Step::Insert(batch) = step {
            let mut p = Packed::new();
            for (k, t, r) in batch {
                p.push_with(|buf| Entry { key: k, timestamp: *t, reference: *r }.encode(buf));
                model.insert(k, *t, *r);
                inserts += 1;
            }
            shard.insert(&mut p).map_err(|e| e.to_string())?;
        }
    }
    let (m, _) = shard.stats().map_err(|e| e.to_string())?;
    let entries = Stat::Entries.of(&m).ok_or("no `entries` counter")?;
    let index = Stat::IndexBytes.of(&m).ok_or("no `index-bytes` counter")?;
    if !(model.len() as u64..=inserts).contains(&entries) {
        return Err(format!("`entries` = {entries}, outside {}..={inserts} (distinct keys..inserts)", model.len()));
    }
    if index == 0 {
        return Err("`index-bytes` = 0 while holding entries".into());
    }
    Ok(format!("entries {entries} for {} keys, index-bytes {index}", model.len()))
}
