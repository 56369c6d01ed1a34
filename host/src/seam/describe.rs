//! What a plugin says of itself, held to what it was told: its counters
//! bounded, its description echoing every configured parameter.

use memlab_sdk::{Description, Stats};

use super::{Kind, SeamError};
use crate::seam::KindSpecs;

/// The most counters a plugin may report, and the longest name: every
/// report lists them all, so a plugin must not flood it (types.wit).
pub const MAX_STATS: usize = 64;
/// See `MAX_STATS`.
pub const MAX_STAT_NAME: usize = 64;
/// The most parameters a plugin may describe: each described number is
/// probed for its effect (several calls each), so a plugin must not buy
/// itself an unbounded probe, and so a silent bench, by describing many.
pub const MAX_DESCRIBED_PARAMS: usize = 16;

/// Why the parameter probe did not reach a described parameter, so that
/// nothing is said of what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unprobed {
    /// Its value is text: the probe changes numbers and booleans only.
    Text,
    /// The plugin refused every changed value the probe tried.
    Refused,
}

impl Unprobed {
    /// Why, in a few words.
    pub fn reason(self) -> &'static str {
        match self {
            Unprobed::Text => "text is not probed",
            Unprobed::Refused => "it refused every changed value",
        }
    }
}

/// A plugin's counters within `MAX_STATS` and `MAX_STAT_NAME`.
pub(super) fn bounded(stats: &Stats) -> Result<(), String> {
    if stats.len() > MAX_STATS {
        return Err(format!("reported {} counters; at most {MAX_STATS} are allowed", stats.len()));
    }
    match stats.iter().find(|(name, _)| name.len() > MAX_STAT_NAME) {
        Some((name, _)) => Err(format!("a counter's name is {} bytes long; at most {MAX_STAT_NAME} are allowed", name.len())),
        None => Ok(()),
    }
}

/// A key as a message shows it: printable bytes as they are, others in
/// hex, long keys cut.
pub fn show_key(key: &[u8]) -> String {
    let shown: String = key.iter().take(48).map(|&b| if b.is_ascii_graphic() || b == b' ' { (b as char).to_string() } else { format!("\\x{b:02x}") }).collect();
    let more = if key.len() > 48 { format!("... ({} bytes)", key.len()) } else { String::new() };
    format!("\"{shown}\"{more}")
}

/// `describe()` must echo every configured parameter with its configured
/// value (numbers compared as numbers, so `064` may come back as `64`): a
/// plugin that ignores a parameter would otherwise be published as if it
/// had run with it.
pub fn check_description(kind: Kind, plugin: &str, configured: &[(String, String)], described: &Description) -> Result<(), SeamError> {
    if described.params.len() > MAX_DESCRIBED_PARAMS {
        let detail = format!("it describes {} parameters; at most {MAX_DESCRIBED_PARAMS} are allowed (each is probed)", described.params.len());
        return Err(SeamError::contract(plugin, kind.spec().describe, 0, detail));
    }
    let same = |a: &str, b: &str| a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y);
    for (key, value) in configured {
        let detail = match described.params.iter().find(|(k, _)| k == key) {
            Some((_, applied)) if same(applied, value) => continue,
            Some((_, applied)) => format!("parameter `{key}` was configured as `{value}`, but it says it applied `{applied}`"),
            None => format!("parameter `{key}` = `{value}` was configured, but it does not list it as applied"),
        };
        return Err(SeamError::contract(plugin, kind.spec().describe, 0, detail));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use memlab_sdk::Description;

    use super::{Kind, MAX_DESCRIBED_PARAMS, check_description};

    #[test]
    fn a_description_of_too_many_parameters_breaks_the_contract() {
        let of = |n: usize| Description { name: "p".into(), version: "1".into(), params: (0..n).map(|i| (format!("k{i}"), "1".into())).collect() };
        assert!(check_description(Kind::Allocator, "p", &[], &of(MAX_DESCRIBED_PARAMS)).is_ok());
        let err = check_description(Kind::Allocator, "p", &[], &of(MAX_DESCRIBED_PARAMS + 1)).expect_err("too many");
        assert!(err.to_string().contains("describes 17 parameters"), "{err}");
    }
}
