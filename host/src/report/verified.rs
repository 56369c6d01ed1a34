//! What the host checked of a run, as its summary says it: the flushes
//! against the ledger, the segments read back, the final state, and the
//! parameters that changed nothing.

use super::thousands;
use crate::record::{Site, VariantResult};
use crate::util::text::for_terminal;

/// What the host checked of a run: the flushes against its ledger, the
/// segments read back, and the final state against the stream.
pub(super) fn verified_line(v: &VariantResult, verify: bool) -> String {
    let final_state = v.verified.map_or_else(
        || match &v.not_verified {
            Some(why) => format!("final state not compared this round: {why}"),
            None if verify => "no".into(),
            None => "skipped (verify = false)".into(),
        },
        |x| format!("{} keys, digest {:032x}, {} rows read back", thousands(x.keys as f64), x.digest, thousands(x.rows_read as f64)),
    );
    match v.checked {
        Some(k) => format!(
            "{final_state}; every flush held to the host's ledger ({} rows), {} segments read back whole, {} of them held to what their serializer was handed",
            thousands(k.ledger_rows as f64),
            k.segments,
            k.tallied
        ),
        None => final_state,
    }
}

/// The parameters that changed nothing, each where it was probed: the
/// memtable's and allocator's on the bench's own taped rows where a run
/// taped any, the rest on check's bench-shaped workload.
pub(super) fn idle_line(v: &VariantResult, idle: &[crate::record::NoEffect]) -> String {
    // Only what the probe reached is claimed; the rest is named.
    let unprobed: Vec<String> = v.not_probed.iter().map(|n| format!("{} `{}` ({})", n.kind, for_terminal(&n.param), n.why.reason())).collect();
    let unprobed = if unprobed.is_empty() { String::new() } else { format!("; not probed: {}", unprobed.join(", ")) };
    if idle.is_empty() {
        let site = match v.params_rows {
            0 => Site::Workload.shown().to_string(),
            rows => format!("the memtable's and allocator's on {} of this bench's own rows, the others' {}", thousands(rows as f64), Site::Workload.shown()),
        };
        return format!("each probed number or boolean it describes changes what its plugin does ({site}){unprobed}");
    }
    let shown: Vec<String> =
        idle.iter().map(|n| format!("{} `{}` (tried {}, {})", n.kind, for_terminal(&n.param), for_terminal(&n.tried), n.on.shown())).collect();
    format!("has no effect here: {} (changing it changed nothing where it was probed; it may matter only at another size){unprobed}", shown.join(", "))
}
