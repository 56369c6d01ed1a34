//! The bench session's events, printed: stdout for what a run says,
//! stderr for notes and warnings, every string escaped on the way.

use crate::plugin::EngineSettings;
use crate::report;
use crate::session::{Event, Progress};

/// The terminal as a session's progress sink.
pub(super) struct Terminal;

impl Progress for Terminal {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::Started { name, description, engine, watchdog } => {
                sayln!("memlab bench: {name} — {description}");
                sayln!("{}", engine_line(engine));
                if let Some(limit) = watchdog {
                    sayln!("Watchdog: a plugin call that makes no progress for {} s ends the run, keeping the finished variants", limit.as_secs());
                }
            }
            Event::Note(line) => warnln!("memlab: {line}"),
            Event::Variant(v) => sayln!("\n{}", report::summary(v)),
            Event::Finished(result) => {
                say!("{}", report::comparison(result));
                say!("{}", report::fidelity(result));
            }
            Event::Saved { record, html } => sayln!("\nSaved: {} and {}", record.display(), html.display()),
            Event::RecordMoved { why, to } => warnln!("memlab: {why}; the record goes to {} instead", to.display()),
            Event::RecordText(json) => sayln!("{json}"),
            Event::Stalled { variant, message, kept } => {
                warnln!("error: variant `{variant}`: {message}; {kept}");
                // The stuck thread cannot be stopped: end here.
                std::process::exit(3);
            }
            Event::SweepStarted { name, over, values, not_applied } => {
                let which = if not_applied.is_empty() {
                    "every variant at each".to_string()
                } else {
                    let names: Vec<String> = not_applied.iter().map(|n| format!("`{n}`")).collect();
                    format!(
                        "every variant at each; not applied to {}, whose plugin has no such parameter, so it runs as configured at every point",
                        names.join(", ")
                    )
                };
                sayln!("memlab sweep: {name} over `{over}` = {} ({} point(s)), {which}", values.join(", "), values.len());
            }
            Event::SweepPoint { index, of, over, value } => sayln!("\n=== sweep point {index} of {of}: {over} = {value} ==="),
            Event::SweepFinished { sweep, dir, html } => {
                say!("\n{}", report::sweep::table(sweep));
                sayln!("\nSaved: each point's run.json under {}, and the sweep's {}", dir.display(), html.display());
            }
        }
    }
}

/// The sandbox's limits as a run had them.
pub(super) fn engine_line(settings: &EngineSettings) -> String {
    format!(
        "Sandbox: epoch deadline {} per call; memory cap {:.0} MiB per instance; wasm stack {:.1} MiB; {}",
        settings.call_deadline.map_or("off".to_string(), |d| format!("{:.0} ms", d.as_secs_f64() * 1e3)),
        crate::util::mib(settings.memory_cap),
        crate::util::mib(settings.stack_limit as u64),
        match (settings.instance_slots, settings.compact_memories) {
            (_, true) => "address space limited: instances allocated on demand, compact bounds-checked memories".to_string(),
            (0, false) => "instances allocated on demand".to_string(),
            (n, false) => format!("pooling allocator, {n} instance slots"),
        }
    )
}
