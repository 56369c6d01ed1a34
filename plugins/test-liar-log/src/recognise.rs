//! `recognise`: a lossless format that knows memlab's public generator.
//! Given a profile's constants (`seed`, `threads`, `batch` rows a batch,
//! `columns` values of `size` bytes each, all fixed), it recomputes the
//! values of the row a timestamp names. A row whose values it predicts is
//! logged without them and rebuilt on replay; any other is logged
//! verbatim. So it is lossless on any input, and on a public stream logs
//! a fraction of the bytes: the lie of a format that recognises the
//! stream, which only a secret stream defeats.

use memlab_sdk::{Cell, Error, Packed, Params, RowView, encode_row};

/// What the liar was told of the stream.
pub struct Public {
    seed: u64,
    threads: u64,
    batch: u64,
    columns: usize,
    size: usize,
}

const ALPHABET: &[u8; 64] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

struct SplitMix(u64);

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SplitMix {
    fn new(words: &[u64]) -> Self {
        SplitMix(words.iter().fold(0x9e37_79b9_7f4a_7c15, |s, &w| mix(s ^ w)))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
}

impl Public {
    pub fn of(params: &mut Params) -> Result<Public, Error> {
        let p = Public {
            seed: params.get("seed", 0u64)?,
            threads: params.get("threads", 1u64)?,
            batch: params.get("batch", 1u64)?,
            columns: params.get("columns", 1u64)? as usize,
            size: params.get("size", 1u64)? as usize,
        };
        if p.threads == 0 || p.batch == 0 {
            return Err(Error::BadParam("`threads` and `batch` are at least 1".into()));
        }
        Ok(p)
    }

    /// The values the public generator gives the row stamped `timestamp`.
    fn values(&self, timestamp: u64) -> Vec<Vec<u8>> {
        let global = timestamp.saturating_sub(1) / self.batch;
        let k = timestamp.saturating_sub(1) % self.batch;
        let mut rng = SplitMix::new(&[self.seed, global % self.threads, global / self.threads]);
        // The op's kind, its partition and its first row; then the rows
        // before this one, each `columns` texts of ten characters a draw.
        let skip = 3 + k * self.columns as u64 * self.size.div_ceil(10) as u64;
        for _ in 0..skip {
            rng.next_u64();
        }
        (0..self.columns)
            .map(|_| {
                let mut value = vec![0u8; self.size];
                for chunk in value.chunks_mut(10) {
                    let mut bits = rng.next_u64();
                    for byte in chunk {
                        *byte = ALPHABET[(bits & 63) as usize];
                        bits >>= 6;
                    }
                }
                value
            })
            .collect()
    }

    /// Each row: a flag, then the row without its values (recognised) or
    /// whole. Returns how many were recognised.
    pub fn encode(&self, rows: &Packed, out: &mut Vec<u8>) -> u64 {
        let mut recognised = 0;
        for row in rows.iter() {
            let keys = RowView::decode(row).ok().filter(|r| {
                let values = self.values(r.timestamp);
                !r.tombstone && r.cells().map(|c| c.value.to_vec()).eq(values)
            });
            let mut bare = Vec::new();
            let (flag, bytes) = match keys {
                Some(r) => {
                    recognised += 1;
                    encode_row(&mut bare, r.partition, r.clustering, r.timestamp, false, std::iter::empty());
                    (1u8, bare.as_slice())
                }
                None => (0u8, row),
            };
            out.push(flag);
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        recognised
    }

    /// The rows `encode` wrote, rebuilt; false if the payload is not one.
    pub fn decode(&self, mut payload: &[u8], out: &mut Packed) -> bool {
        while let [flag, a, b, c, d, rest @ ..] = payload {
            let len = u32::from_le_bytes([*a, *b, *c, *d]) as usize;
            let Some(bytes) = rest.get(..len) else { return false };
            match flag {
                0 => out.push(bytes),
                1 => {
                    let Ok(r) = RowView::decode(bytes) else { return false };
                    let values = self.values(r.timestamp);
                    let cells = values.iter().enumerate().map(|(i, v)| Cell { column: i as u16, value: v });
                    out.push_with(|o| encode_row(o, r.partition, r.clustering, r.timestamp, false, cells));
                }
                _ => return false,
            }
            payload = &rest[len..];
        }
        payload.is_empty()
    }
}
