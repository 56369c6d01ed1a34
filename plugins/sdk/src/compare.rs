//! Key comparison for guests: wasm32's `memcmp` is a byte loop, so
//! comparing eight bytes at a time is several times faster for the long,
//! shared-prefix keys memtables compare.

use std::cmp::Ordering;

/// Compares `a` and `b` as `memcmp` then length would (the order of
/// `<[u8]>::cmp`), a word at a time.
#[inline]
pub fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let (mut ac, mut bc) = (a[..n].chunks_exact(8), b[..n].chunks_exact(8));
    for (x, y) in (&mut ac).zip(&mut bc) {
        let (mut xw, mut yw) = ([0u8; 8], [0u8; 8]);
        xw.copy_from_slice(x);
        yw.copy_from_slice(y);
        // Little-endian words and the lowest differing byte: wasm has no
        // byte swap, and emulating one cost ~15 instructions a word.
        let (x, y) = (u64::from_le_bytes(xw), u64::from_le_bytes(yw));
        if x != y {
            let shift = (x ^ y).trailing_zeros() & !7;
            return ((x >> shift) as u8).cmp(&((y >> shift) as u8));
        }
    }
    ac.remainder().cmp(bc.remainder()).then(a.len().cmp(&b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_like_slices() {
        let keys: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            b"abcdefgh".to_vec(),
            b"abcdefgh\0".to_vec(),
            b"abcdefgi".to_vec(),
            b"abcdefghabcdefgh".to_vec(),
            b"abcdefghabcdefgz".to_vec(),
            vec![0xff; 9],
            vec![0xff; 8],
            // Same length, differing only after the last whole word.
            b"a".to_vec(),
            b"b".to_vec(),
            b"abcdefgha".to_vec(),
            b"abcdefghb".to_vec(),
            // The first differing byte decides, not the lowest differing
            // bit's neighbourhood: 0x80 vs 0x00, then 0x00 vs 0x01.
            vec![0x80, 0, 0, 0, 0, 0, 0, 0],
            vec![0, 1, 0, 0, 0, 0, 0, 0],
        ];
        for a in &keys {
            for b in &keys {
                assert_eq!(compare_keys(a, b), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }
}
