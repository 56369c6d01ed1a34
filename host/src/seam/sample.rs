//! The host's own sample of what a live memtable holds. For partitions
//! picked by a secret drawn once per process (never passed to a plugin),
//! the shard keeps every key inserted this generation with its newest
//! timestamp; a point read or a scan that touches a sampled partition is
//! held to it. A plugin cannot tell which reads are checked, so one that
//! answers "absent" or cuts a scan short is caught in the run it lies in.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use memlab_sdk::{Entry, Packed};

/// Bytes of a sort key that hold its token: the sample picks tokens, so a
/// partition is sampled whole.
const TOKEN: usize = 8;

/// The per-process secret: from std's randomly keyed hasher, which draws
/// its keys from the operating system.
pub(crate) fn secret() -> u64 {
    static SECRET: OnceLock<u64> = OnceLock::new();
    *SECRET.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x6d65_6d6c_6162_u64))
}

/// splitmix64's finaliser: every bit of the token moves the pick.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Whether the secret picks `value` for a sample of one in `every`: the
/// one rule every sampled check (live reads here, segments at verify
/// time) picks by.
pub fn picked(value: u64, every: u64) -> bool {
    every > 0 && mix(value ^ secret()).is_multiple_of(every)
}

/// The secret's own offset into `len` bytes (for the damaged copy).
pub fn secret_offset(len: usize) -> usize {
    (mix(secret().rotate_left(17) ^ len as u64) % len.max(1) as u64) as usize
}

/// The secret's pick of one of `len` items, salted (by a round number, so
/// each round picks anew); `len` 0 picks nothing.
pub fn secret_pick(len: usize, salt: u64) -> usize {
    if len == 0 {
        return usize::MAX;
    }
    (mix(secret().rotate_left(31) ^ mix(salt)) % len as u64) as usize
}

/// Keys of the sampled partitions a shard's live generation holds.
#[derive(Debug)]
pub struct Sample {
    every: u64,
    keys: BTreeMap<Vec<u8>, u64>,
    /// Reads and scans held to the sample so far.
    pub checked: u64,
}

impl Sample {
    /// Samples one partition in `every` (at least 1).
    pub fn new(every: u64) -> Self {
        Sample { every: every.max(1), keys: BTreeMap::new(), checked: 0 }
    }

    fn token(key: &[u8]) -> Option<[u8; TOKEN]> {
        key.get(..TOKEN).map(|t| t.try_into().unwrap_or_default())
    }

    fn picks(&self, key: &[u8]) -> bool {
        Self::picks_key(key, self.every)
    }

    fn picks_key(key: &[u8], every: u64) -> bool {
        Self::token(key).is_some_and(|t| picked(u64::from_be_bytes(t), every))
    }

    /// Whether `entries` hold a key of a partition a sample of one in
    /// `every` picks: a concurrent shard's writer touches the sample only
    /// for a batch that does.
    pub fn holds_picked(every: u64, entries: &Packed) -> bool {
        entries.iter().any(|record| record.get(Entry::HEADER..).is_some_and(|key| Self::picks_key(key, every)))
    }

    /// Notes the sampled keys of entries the memtable accepted.
    pub fn inserted(&mut self, entries: &Packed) {
        for record in entries.iter() {
            let Some(key) = record.get(Entry::HEADER..) else { continue };
            if !self.picks(key) {
                continue;
            }
            let Ok(entry) = Entry::decode(record) else { continue };
            let newest = self.keys.entry(key.to_vec()).or_insert(entry.timestamp);
            *newest = (*newest).max(entry.timestamp);
        }
    }

    /// Holds point reads of sampled keys to the sample: a key held must be
    /// found at its newest timestamp, a key not held must be absent.
    pub fn check_get(&mut self, asked: &Packed, answers: &Packed) -> Result<(), String> {
        for (key, answer) in asked.iter().zip(answers.iter()) {
            if !self.picks(key) {
                continue;
            }
            self.checked += 1;
            let found = if answer.is_empty() { None } else { Entry::decode(answer).ok().map(|e| e.timestamp) };
            match (self.keys.get(key), found) {
                (Some(&want), Some(got)) if want == got => {}
                (None, None) => {}
                (Some(&want), None) => return Err(format!("answered absent for key {}, which this generation holds (timestamp {want})", super::show_key(key))),
                (None, Some(_)) => return Err(format!("answered key {}, which this generation never held", super::show_key(key))),
                (Some(&want), Some(got)) => {
                    return Err(format!("answered key {} at timestamp {got}, but its newest write in this generation has {want}", super::show_key(key)));
                }
            }
        }
        Ok(())
    }

    /// Holds a scan from a sampled token to the sample: the entries it
    /// returned with the start's token must be exactly the first ones the
    /// sample holds from `start` (below `end`), up to `limit`.
    pub fn check_scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32, out: &Packed) -> Result<(), String> {
        let Some(token) = Self::token(start).filter(|_| self.picks(start)) else { return Ok(()) };
        self.checked += 1;
        let same = |key: &[u8]| Self::token(key) == Some(token) && end.is_none_or(|end| key < end);
        let returned: Vec<(&[u8], u64)> = out.iter().filter_map(|r| Entry::decode(r).ok()).map(|e| (e.key, e.timestamp)).take_while(|(k, _)| same(k)).collect();
        let held = self.keys.range(start.to_vec()..).take_while(|(k, _)| same(k)).take(limit as usize);
        let held: Vec<(&[u8], u64)> = held.map(|(k, &t)| (k.as_slice(), t)).collect();
        if returned == held {
            return Ok(());
        }
        let first = held.iter().zip(&returned).position(|(a, b)| a != b).unwrap_or(held.len().min(returned.len()));
        let what = match (held.get(first), returned.get(first)) {
            (Some((k, _)), None) => format!("it stopped before key {}", super::show_key(k)),
            (None, Some((k, _))) => format!("it returned key {}, which this generation does not hold", super::show_key(k)),
            (Some((k, t)), Some((_, got))) if held[first].0 == returned[first].0 => {
                format!("it returned key {} at timestamp {got}, the newest is {t}", super::show_key(k))
            }
            (Some((k, _)), Some(_)) => format!("it skipped key {}", super::show_key(k)),
            (None, None) => String::new(),
        };
        Err(format!(
            "a scan from {} returned {} entries of its partition where this generation holds {}: {what}",
            super::show_key(start),
            returned.len(),
            held.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Sample;
    use memlab_sdk::{Entry, Packed};

    fn entry(key: &[u8], ts: u64) -> Vec<u8> {
        let mut out = Vec::new();
        Entry { key, timestamp: ts, reference: 0 }.encode(&mut out);
        out
    }

    fn packed(records: &[Vec<u8>]) -> Packed {
        let mut p = Packed::new();
        records.iter().for_each(|r| p.push(r));
        p
    }

    #[test]
    fn every_partition_sampled_catches_a_short_scan_and_a_false_miss() {
        let mut s = Sample::new(1);
        let keys: Vec<Vec<u8>> = (0..4u8).map(|i| [[7u8; 8].as_slice(), b"p\0\0", &[i]].concat()).collect();
        s.inserted(&packed(&keys.iter().map(|k| entry(k, 5)).collect::<Vec<_>>()));
        let start = [[7u8; 8].as_slice(), b"p\0\0"].concat();
        let all = packed(&keys.iter().map(|k| entry(k, 5)).collect::<Vec<_>>());
        assert!(s.check_scan(&start, None, 10, &all).is_ok());
        assert!(s.check_scan(&start, None, 2, &packed(&[entry(&keys[0], 5), entry(&keys[1], 5)])).is_ok());
        let short = packed(&[entry(&keys[0], 5), entry(&keys[1], 5)]);
        assert!(s.check_scan(&start, None, 10, &short).err().unwrap_or_default().contains("stopped before"));
        let asked = packed(&keys[..1]);
        assert!(s.check_get(&asked, &packed(&[Vec::new()])).err().unwrap_or_default().contains("absent"));
        assert!(s.check_get(&asked, &packed(&[entry(&keys[0], 4)])).err().unwrap_or_default().contains("newest"));
        assert!(s.check_get(&asked, &packed(&[entry(&keys[0], 5)])).is_ok());
    }
}
