use std::str::FromStr;

use crate::error::Error;

/// Named counters for reports, as in WIT `stats`.
pub type Stats = Vec<(String, u64)>;

/// The counters the contracts require, by their WIT names: a memtable
/// reports `entries` and `index-bytes`, an allocator the other five.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stat {
    /// Distinct keys a memtable holds.
    Entries,
    /// Bytes a memtable's index takes, keys included.
    IndexBytes,
    /// Row bytes an allocator holds.
    BytesUsed,
    /// Bytes an allocator reserved from the pool.
    BytesReserved,
    /// Regions (chunks, slabs) an allocator holds.
    Regions,
    /// Pool reservations an allocator made.
    Reservations,
    /// Reserved bytes that hold no row.
    Waste,
}

impl Stat {
    /// The counters every memtable reports.
    pub const MEMTABLE: [Stat; 2] = [Stat::Entries, Stat::IndexBytes];
    /// The counters every allocator reports.
    pub const ALLOCATOR: [Stat; 5] = [Stat::BytesUsed, Stat::BytesReserved, Stat::Regions, Stat::Reservations, Stat::Waste];

    /// The counter's name in `stats`.
    pub const fn name(self) -> &'static str {
        match self {
            Stat::Entries => "entries",
            Stat::IndexBytes => "index-bytes",
            Stat::BytesUsed => "bytes-used",
            Stat::BytesReserved => "bytes-reserved",
            Stat::Regions => "regions",
            Stat::Reservations => "reservations",
            Stat::Waste => "waste",
        }
    }

    /// The counter with `value`, as `stats` lists it.
    pub fn with(self, value: u64) -> (String, u64) {
        (self.name().to_string(), value)
    }

    /// This counter's value in `stats`, if reported.
    pub fn of(self, stats: &[(String, u64)]) -> Option<u64> {
        stats.iter().find(|(k, _)| k == self.name()).map(|(_, v)| *v)
    }
}

/// What ran: recorded in every report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// The strategy's name, as config names it.
    pub name: String,
    /// The strategy's version.
    pub version: String,
    /// Every parameter as applied, defaults included.
    pub params: Vec<(String, String)>,
}

/// Parameters given in config; each one must be taken, or it is rejected.
#[derive(Debug, Clone, Default)]
pub struct Params {
    given: Vec<(String, String)>,
    taken: Vec<bool>,
    applied: Vec<(String, String)>,
}

impl Params {
    /// Wraps the parameters as written in config.
    pub fn new(given: Vec<(String, String)>) -> Self {
        let taken = vec![false; given.len()];
        Params { given, taken, applied: Vec::new() }
    }

    /// Takes `name`, or `default` when it is not given.
    pub fn get<T>(&mut self, name: &str, default: T) -> Result<T, Error>
    where
        T: FromStr + ToString,
    {
        let mut value = None;
        for (i, (key, raw)) in self.given.iter().enumerate() {
            if key == name {
                self.taken[i] = true;
                let parsed = raw.parse::<T>().map_err(|_| Error::BadParam(format!("`{name}` = `{raw}` does not parse")))?;
                value = Some(parsed);
            }
        }
        let value = value.unwrap_or(default);
        self.applied.push((name.to_string(), value.to_string()));
        Ok(value)
    }

    /// Fails on the first parameter no `get` asked for.
    pub fn finish(self) -> Result<Vec<(String, String)>, Error> {
        if let Some(i) = self.taken.iter().position(|t| !t) {
            let known: Vec<&str> = self.applied.iter().map(|(k, _)| k.as_str()).collect();
            return Err(Error::BadParam(format!(
                "unknown parameter `{}` (known: {})",
                self.given[i].0,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        }
        Ok(self.applied)
    }
}

/// Runs a constructor's parameter handling: build, then reject leftovers.
pub(crate) fn construct<T>(
    name: &str,
    version: &str,
    given: Vec<(String, String)>,
    build: impl FnOnce(&mut Params) -> Result<T, Error>,
) -> Result<(T, Description), Error> {
    let mut params = Params::new(given);
    let value = build(&mut params)?;
    let applied = params.finish()?;
    Ok((value, Description { name: name.to_string(), version: version.to_string(), params: applied }))
}
