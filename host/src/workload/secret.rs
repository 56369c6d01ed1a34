//! The stream's secret: a per-run salt that keys every byte of content
//! (partition keys, clustering keys, values), while the shape (op kinds,
//! partitions chosen, sizes, tombstones, timestamps, order) stays a
//! public function of the profile's seed.
//!
//! A plugin sees the rows but not the salt, so it cannot rebuild a row
//! from where it sits in the stream: each 10-character chunk is the
//! public draw XORed with a SipHash-1-3 word keyed by the 128-bit salt
//! (a PRF: one chunk seen says nothing of another). Without a salt the
//! stream is the public one, byte for byte.

use std::fmt;
use std::hash::Hasher as _;
use std::str::FromStr;

use siphasher::sip::SipHasher13;

/// A run's secret: the key of its content.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Salt(u128);

impl Salt {
    /// A fresh salt from the operating system's randomness.
    pub fn fresh() -> Result<Salt, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        Ok(Salt(u128::from_le_bytes(bytes)))
    }

    /// A salt drawn from `seed`: secret as long as the seed is (`memlab
    /// check` draws its seed from the OS, and prints it only at the end).
    pub fn drawn_from(seed: u64) -> Salt {
        let mut h = SipHasher13::new_with_keys(seed, !seed);
        h.write_u64(0x5a17);
        let low = h.finish();
        h.write_u64(low);
        Salt(u128::from(low) | u128::from(h.finish()) << 64)
    }

    /// The content word for chunk `chunk` of field `field` (a domain and
    /// its ids).
    pub(super) fn word(self, field: [u64; 5], chunk: u64) -> u64 {
        let mut h = SipHasher13::new_with_keys(self.0 as u64, (self.0 >> 64) as u64);
        for id in field {
            h.write_u64(id);
        }
        h.write_u64(chunk);
        h.finish()
    }
}

// Never printed by accident: a salt shown in a log line would be read by
// whoever reads the log during the run.
impl fmt::Debug for Salt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Salt(..)")
    }
}

impl fmt::Display for Salt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// A salt that is not 32 hex digits.
#[derive(Debug, thiserror::Error)]
#[error("a salt is 32 hex digits, as a record's `stream_salt` shows it; got {0:?}")]
pub struct BadSalt(String);

impl FromStr for Salt {
    type Err = BadSalt;

    fn from_str(text: &str) -> Result<Salt, BadSalt> {
        let bad = || BadSalt(crate::util::text::for_terminal(text).chars().take(40).collect());
        // Digits only: `from_str_radix` would take a leading `+`.
        let mut bytes = [0u8; 16];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| bad())?;
        Ok(Salt(u128::from_be_bytes(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::Salt;

    #[test]
    fn a_salt_reads_back_what_it_prints_and_refuses_anything_else() {
        let salt: Salt = "0123456789abcdef0011223344556677".parse().expect("a salt");
        assert_eq!(salt.to_string(), "0123456789abcdef0011223344556677");
        assert_eq!(format!("{salt:?}"), "Salt(..)");
        for bad in ["", "0123", "0123456789abcdef001122334455667g", "+123456789abcdef0011223344556677", "0123456789abcdef00112233445566778"] {
            assert!(bad.parse::<Salt>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn words_differ_by_salt_field_and_chunk() {
        let (a, b) = (Salt(1), Salt(2));
        let w = a.word([1, 2, 3, 4, 0], 0);
        assert_ne!(w, b.word([1, 2, 3, 4, 0], 0));
        assert_ne!(w, a.word([1, 2, 3, 5, 0], 0));
        assert_ne!(w, a.word([1, 2, 3, 4, 0], 1));
        assert_eq!(w, a.word([1, 2, 3, 4, 0], 0));
    }
}
