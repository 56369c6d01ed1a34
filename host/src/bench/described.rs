//! Descriptions held where the bench runs. The preflight holds each
//! description on one fixed workload; a plugin that recognises it could
//! behave its described way there alone. So after each run the tape of a
//! secret shard's first instance (its own stores and inserts, `seam::Tape`)
//! is replayed into twins in a pool of the variant's budget and mode:
//! created as configured, and with one kind's described parameters. A
//! kind whose twin counts, reserves or holds anything differently
//! described what it does not do on the bench's rows: the variant fails.
//! Then each described number or boolean is changed, one twin each, and
//! one that changes nothing on these rows is published as such, whatever
//! the preflight's probe found: a plugin may honour a parameter only
//! where it can tell it is probed.

use std::collections::BTreeMap;
use std::sync::Arc;

use memlab_sdk::Description;

use super::strategies::TwinFactory;
use crate::check::{changed_values, described_params};
use crate::config::{Variant, params};
use crate::pool::MemoryPool;
use crate::record::{NoEffect, NotProbed, Site};
use crate::seam::{KINDS, Kind, KindSpecs, SeamError, Tape, Unprobed, behaviour};

/// What the tape showed of the memtable's and allocator's parameters.
#[derive(Debug, Default)]
pub(super) struct OnRows {
    /// Rows the twins were fed.
    pub rows: u64,
    pub idle: Vec<NoEffect>,
    pub unprobed: Vec<NotProbed>,
}

/// The kinds whose parameters the tape probes: those a shard holds.
pub(super) fn taped() -> impl Iterator<Item = Kind> {
    KINDS.iter().filter(|k| k.taped).map(|k| k.kind)
}

/// Each taped kind's parameters, by kind.
type ByKind = BTreeMap<Kind, Vec<(String, String)>>;

/// Holds the memtable's and the allocator's descriptions to the tape, then
/// probes their parameters on it; `None` where nothing was taped.
pub(super) fn hold(variant: &Variant, descriptions: &BTreeMap<Kind, Description>, tape: &Tape, twin: &TwinFactory) -> Result<Option<OnRows>, SeamError> {
    if tape.calls() == 0 {
        return Ok(None);
    }
    let configured = |kind: Kind| variant.strategies().find(|(k, _)| *k == kind).map(|(_, s)| params(s.params)).unwrap_or_default();
    // A config's parameters come sorted by key, as `described` sorts.
    let described = |kind: Kind| descriptions.get(&kind).map(described_params);
    let own: ByKind = taped().map(|kind| (kind, configured(kind))).collect();
    let with = |kind: Kind, params: &[(String, String)]| {
        let mut all = own.clone();
        all.insert(kind, params.to_vec());
        trace(variant, tape, twin, &all)
    };
    let as_configured = trace(variant, tape, twin, &own)?;
    let mut on_rows = OnRows { rows: tape.rows(), ..OnRows::default() };
    for kind in taped() {
        let Some(own) = described(kind) else { continue };
        if own != configured(kind) {
            let as_described = with(kind, &own)?;
            if as_described != as_configured {
                return Err(differs(variant, kind, &own, tape, &as_configured, &as_described));
            }
        }
        for (i, (name, value)) in own.iter().enumerate() {
            let param = name.clone();
            let changes = changed_values(value);
            if changes.is_empty() {
                on_rows.unprobed.push(NotProbed { kind, param, why: Unprobed::Text });
                continue;
            }
            // The first change the plugin accepts decides, as the preflight's.
            let accepted = changes.into_iter().find_map(|other| {
                let mut tried = own.clone();
                tried[i].1.clone_from(&other);
                with(kind, &tried).ok().map(|shown| (other, shown))
            });
            match accepted {
                Some((tried, shown)) if shown == as_configured => on_rows.idle.push(NoEffect { kind, param, tried, on: Site::BenchRows }),
                Some(_) => {}
                None => on_rows.unprobed.push(NotProbed { kind, param, why: Unprobed::Refused }),
            }
        }
    }
    Ok(Some(on_rows))
}

/// The failure of a kind whose description behaves otherwise on the tape.
fn differs(variant: &Variant, kind: Kind, own: &[(String, String)], tape: &Tape, as_configured: &str, as_described: &str) -> SeamError {
    let shown: Vec<String> = own.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    let plugin = variant.strategies().find(|(k, _)| *k == kind).map_or("", |(_, s)| s.plugin);
    let detail = format!(
        "created with what it described ({}), it behaves differently on {} of this bench's own calls (replayed into fresh instances in a pool like the variant's): as configured {as_configured}; with its description {as_described}",
        shown.join(", "),
        tape.calls()
    );
    SeamError::contract(plugin, kind.spec().describe, 0, detail)
}

/// What a twin shows once the tape is replayed into it, created with the
/// memtable's and the allocator's parameters.
fn trace(variant: &Variant, tape: &Tape, twin: &TwinFactory, params: &ByKind) -> Result<String, SeamError> {
    let pool = Arc::new(MemoryPool::new(variant.memtable_space, variant.pool));
    let of = |kind| params.get(&kind).map_or(&[][..], Vec::as_slice);
    let mut shard = twin(of(Kind::Memtable), of(Kind::Allocator), pool)?;
    tape.replay(&mut shard)?;
    behaviour(&mut shard)
}
