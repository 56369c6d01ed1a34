//! The command line's value parsers: each refuses a bad value with what
//! it may be, before anything runs.

/// A deadline in milliseconds: finite, 1 ms to an hour.
pub(super) fn deadline(text: &str) -> Result<f64, String> {
    let ms: f64 = text.parse().map_err(|e| format!("`{text}` is not a number of milliseconds: {e}"))?;
    if !(1.0..=3_600_000.0).contains(&ms) {
        return Err(format!("`{text}` ms is outside 1..=3600000 (an hour); a deadline cannot be turned off from here"));
    }
    Ok(ms)
}

pub(super) fn budget(text: &str) -> Result<f64, String> {
    let secs: f64 = text.parse().map_err(|e| format!("`{text}` is not a number of seconds: {e}"))?;
    if !(0.0..=604_800.0).contains(&secs) {
        return Err(format!("`{text}` s is outside 0..=604800 (a week; 0 is no budget)"));
    }
    Ok(secs)
}

pub(super) fn max_rounds(text: &str) -> Result<usize, String> {
    crate::config::round_count(text.parse().map_err(|_| format!("`{text}` is not a whole number"))?)
}

pub(super) fn max_time(text: &str) -> Result<std::time::Duration, String> {
    crate::config::time_ceiling(text)
}

pub(super) fn rse(text: &str) -> Result<f64, String> {
    crate::config::rse_target(text.parse().map_err(|_| format!("`{text}` is not a number"))?)
}

pub(super) fn repeats(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=100).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} is outside 1..=100")),
        Err(e) => Err(format!("`{text}`: {e}")),
    }
}

pub(super) fn positive(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 would check nothing; give at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{text}`: {e}")),
    }
}

fn at_most(text: &str, max: u64) -> Result<u64, String> {
    positive(text).and_then(|n| if n > max { Err(format!("{n} is above the most check takes ({max})")) } else { Ok(n) })
}

pub(super) fn check_ops(text: &str) -> Result<u64, String> {
    at_most(text, 1_000_000_000)
}

pub(super) fn check_size(text: &str) -> Result<u64, String> {
    at_most(text, 20_000_000)
}

pub(super) fn seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|e| format!("`{text}` is not a seed (decimal, or hex with 0x): {e}"))
}

pub(super) fn key_value(text: &str) -> Result<(String, String), String> {
    text.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).ok_or_else(|| format!("`{text}` is not key=value"))
}

/// A kind of strategy by name; `--help` lists the table of kinds'.
pub(super) fn kind() -> impl clap::builder::TypedValueParser<Value = crate::seam::Kind> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(crate::seam::Kind::ALL.map(crate::seam::Kind::name)).try_map(|s| s.parse::<crate::seam::Kind>())
}
