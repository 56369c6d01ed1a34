use std::fmt;

/// An expected failure, returned across the boundary as WIT `error`.
///
/// A panic is not an error: it traps, and the host then treats the instance
/// as poisoned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An unknown parameter, or a value that does not parse.
    BadParam(String),
    /// The host's memory pool refused a reservation.
    PoolFull,
    /// Input bytes that break the documented layouts, or a damaged segment.
    Corrupt(String),
    /// A call the contract forbids in the current state.
    InvalidState(String),
    /// Anything else.
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadParam(m) => write!(f, "bad parameter: {m}"),
            Error::PoolFull => f.write_str("memory pool is full"),
            Error::Corrupt(m) => write!(f, "corrupt input: {m}"),
            Error::InvalidState(m) => write!(f, "invalid state: {m}"),
            Error::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub(crate) fn corrupt(what: impl fmt::Display) -> Error {
    Error::Corrupt(what.to_string())
}
