use std::str::FromStr;

use crate::error::Error;

/// Named counters for reports, as in WIT `stats`.
pub type Stats = Vec<(String, u64)>;

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
                let parsed = raw
                    .parse::<T>()
                    .map_err(|_| Error::BadParam(format!("`{name}` = `{raw}` does not parse")))?;
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
