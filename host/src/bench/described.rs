//! Descriptions held where the bench runs. The preflight holds each
//! description on one fixed workload; a plugin that recognises it could
//! behave its described way there alone. So after each run the tape of a
//! secret shard's first instance (its own stores and inserts, `seam::Tape`)
//! is replayed into twins in a pool of the variant's budget and mode:
//! created as configured, and with one kind's described parameters. A
//! kind whose twin counts, reserves or holds anything differently
//! described what it does not do on the bench's rows: the variant fails.

use std::sync::Arc;

use memlab_sdk::Description;

use super::strategies::TwinFactory;
use crate::check::described_params;
use crate::config::{Variant, params};
use crate::pool::MemoryPool;
use crate::seam::{Kind, KindSpecs, SeamError, Tape, behaviour};

/// Holds the memtable's and the allocator's descriptions to the tape.
pub(super) fn hold(variant: &Variant, descriptions: &[Description], tape: &Tape, twin: &TwinFactory) -> Result<(), SeamError> {
    if tape.calls() == 0 {
        return Ok(());
    }
    let configured = |kind: Kind| variant.strategies().find(|(k, _)| *k == kind).map(|(_, s)| params(s.params)).unwrap_or_default();
    // A config's parameters come sorted by key, as `described` sorts.
    let described = |kind: Kind| variant.strategies().zip(descriptions).find(|((k, _), _)| *k == kind).map(|(_, d)| described_params(d));
    let (memtable, allocator) = (configured(Kind::Memtable), configured(Kind::Allocator));
    let as_configured = trace(variant, tape, twin, &memtable, &allocator)?;
    for kind in [Kind::Memtable, Kind::Allocator] {
        let Some(own) = described(kind).filter(|own| *own != configured(kind)) else { continue };
        let (m, a) = if kind == Kind::Memtable { (&own, &allocator) } else { (&memtable, &own) };
        let as_described = trace(variant, tape, twin, m, a)?;
        if as_described != as_configured {
            let shown: Vec<String> = own.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            let plugin = variant.strategies().find(|(k, _)| *k == kind).map_or("", |(_, s)| s.plugin);
            let detail = format!(
                "created with what it described ({}), it behaves differently on {} of this bench's own calls (replayed into fresh instances in a pool like the variant's): as configured {as_configured}; with its description {as_described}",
                shown.join(", "),
                tape.calls()
            );
            return Err(SeamError::contract(plugin, kind.spec().describe, 0, detail));
        }
    }
    Ok(())
}

/// What a twin shows once the tape is replayed into it.
fn trace(variant: &Variant, tape: &Tape, twin: &TwinFactory, memtable: &[(String, String)], allocator: &[(String, String)]) -> Result<String, SeamError> {
    let pool = Arc::new(MemoryPool::new(variant.memtable_space, variant.pool));
    let mut shard = twin(memtable, allocator, pool)?;
    tape.replay(&mut shard)?;
    behaviour(&mut shard)
}
