//! Helpers every layer shares, and nothing else: the lowest module, which
//! imports none of the crate's others but `input`.

pub mod child;
pub mod files;
pub mod heap;
pub mod stripe;
pub mod text;

use std::path::Path;

/// The message of a caught panic, for a report.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Bytes in MiB, for display.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The median, or `None` of nothing.
pub fn median(mut x: Vec<f64>) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    x.sort_by(f64::total_cmp);
    let mid = x.len() / 2;
    Some(if x.len() % 2 == 1 { x[mid] } else { (x[mid - 1] + x[mid]) / 2.0 })
}

/// Reads a file of at most `limit` bytes: an input larger than that (or
/// endless, like `/dev/zero`) is refused by name, never read whole.
pub fn read_bounded(path: &Path, limit: u64, what: &'static str) -> std::io::Result<Vec<u8>> {
    crate::input::read(path, limit, what).map_err(|e| match e {
        crate::input::ReadError::Io { source, .. } => source,
        crate::input::ReadError::TooLarge { .. } => std::io::Error::other(format!("larger than the {} MiB a {what} may be", limit >> 20)),
        other => std::io::Error::other(other.reason()),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(super::median(vec![]), None);
        assert_eq!(super::median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(super::median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
