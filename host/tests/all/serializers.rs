//! Every serializer, wasm and native twin: seeded records (shared key
//! prefixes, long keys, tombstones) written in uneven batches read back
//! whole and by key; and a flipped bit anywhere in a segment's data or
//! index is a `corrupt` error at open or read, never a trap, a panic or a
//! wrong answer.

use memlab::native;
use memlab::seam::{self, Kind, SeamError};
use memlab::workload::SplitMix;
use memlab_sdk::{Cell, FlushRecord, Packed, encode_flush_record, encode_row};

use crate::support::host;

const SERIALIZERS: [&str; 3] = ["naive", "lean", "block"];
/// Small blocks, so a short stream spans many blocks and restarts.
const BLOCK_PARAMS: [(&str, &str); 2] = [("block_size", "256"), ("restart_interval", "3")];

fn params(serializer: &str) -> Vec<(String, String)> {
    if serializer != "block" {
        return Vec::new();
    }
    BLOCK_PARAMS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// (key, encoded row) pairs.
type Records = Vec<(Vec<u8>, Vec<u8>)>;
/// One row (or a miss) per probed key.
type Gets = Vec<Option<Vec<u8>>>;

/// Sorted, distinct keys with their encoded rows.
fn records(seed: u64, count: usize, long_keys: bool) -> Records {
    let mut rng = SplitMix::new(&[seed]);
    let mut keys: Vec<Vec<u8>> = (0..count)
        .map(|_| {
            let mut key = vec![b'p', b'0' + rng.below(4) as u8];
            let len = if long_keys && rng.below(50) == 0 { 5000 } else { rng.below(12) as usize };
            key.extend((0..len).map(|_| b"abz\x00\xff"[rng.below(5) as usize]));
            key
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|key| {
            let tombstone = rng.below(8) == 0;
            let values: Vec<Vec<u8>> = (0..1 + rng.below(4)).map(|c| vec![b'v' + c as u8; rng.below(40) as usize]).collect();
            let cells = values.iter().enumerate().filter(|_| !tombstone).map(|(c, v)| Cell { column: c as u16, value: v });
            let mut row = Vec::new();
            // The first two key bytes are the partition: partitions change.
            encode_row(&mut row, &key[..2], &key[2..], rng.below(1000), tombstone, cells);
            (key, row)
        })
        .collect()
}

fn writer(serializer: &str, wasm: bool) -> seam::Serializer {
    if wasm {
        let plugin = host().load_as(serializer, Kind::Serializer).expect("serializer");
        host().strategy(&plugin).serializer(&params(serializer), 0).expect("writer")
    } else {
        native::bundled(serializer, Kind::Serializer).and_then(|s| s.serializer(&params(serializer), 0)).expect("native writer")
    }
}

fn reader(serializer: &str, wasm: bool, data: &[u8], index: &[u8]) -> Result<seam::Reader, SeamError> {
    if wasm {
        let plugin = host().load_as(serializer, Kind::Serializer).expect("serializer");
        host().strategy(&plugin).reader(&params(serializer), data, index)
    } else {
        native::bundled(serializer, Kind::Serializer).and_then(|s| s.reader(&params(serializer), data, index))
    }
}

/// Writes `records` in batches of 1 to 20; returns (data, index).
fn write_segment(serializer: &str, wasm: bool, records: &[(Vec<u8>, Vec<u8>)], seed: u64) -> (Vec<u8>, Vec<u8>) {
    let mut rng = SplitMix::new(&[seed, 1]);
    let mut w = writer(serializer, wasm);
    let mut data = Vec::new();
    for batch in records.chunks(1 + rng.below(20) as usize) {
        let mut packed = Packed::new();
        for (key, row) in batch {
            packed.push_with(|buf| encode_flush_record(buf, key, row));
        }
        data.extend(w.write(packed).expect("write"));
    }
    let (tail, finished) = w.finish().expect("finish");
    data.extend(tail);
    assert_eq!(finished.meta.rows, records.len() as u64, "{serializer}: meta rows");
    (data, finished.index)
}

/// Everything the segment says: all records in order, then each probe's get.
fn read_all(r: &mut seam::Reader, probes: &[Vec<u8>]) -> Result<(Records, Gets), SeamError> {
    let mut all = Vec::new();
    loop {
        let batch = r.next(700)?;
        if batch.is_empty() {
            break;
        }
        for record in batch.iter() {
            let f = FlushRecord::decode(record).expect("flush record");
            all.push((f.key.to_vec(), f.row.as_bytes().to_vec()));
        }
    }
    let mut keys = Packed::new();
    probes.iter().for_each(|k| keys.push(k));
    let got = r.get(keys)?;
    let gets = got.iter().map(|record| (!record.is_empty()).then(|| FlushRecord::decode(record).expect("flush record").row.as_bytes().to_vec())).collect();
    Ok((all, gets))
}

fn probes(records: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    let mut probes: Vec<Vec<u8>> = records.iter().map(|(k, _)| k.clone()).collect();
    // Misses before, between and after the keys.
    probes.extend([Vec::new(), b"p".to_vec(), b"p0a\x01".to_vec(), b"q".to_vec(), vec![0xff; 3]]);
    probes.extend(records.iter().step_by(7).map(|(k, _)| [k.as_slice(), b"\x01"].concat()));
    probes
}

#[test]
fn every_serializer_reads_back_what_it_wrote() {
    for serializer in SERIALIZERS {
        for wasm in [true, false] {
            for seed in 1..=3 {
                let records = records(seed, 3000, true);
                let (data, index) = write_segment(serializer, wasm, &records, seed);
                let probes = probes(&records);
                let mut r = reader(serializer, wasm, &data, &index).expect("open");
                let (all, gets) = read_all(&mut r, &probes).expect("read back");
                assert!(all == records, "{serializer} wasm={wasm} seed {seed}: records differ");
                for (probe, got) in probes.iter().zip(gets) {
                    let want = records.binary_search_by(|(k, _)| k.as_slice().cmp(probe)).ok().map(|i| records[i].1.clone());
                    assert_eq!(got, want, "{serializer} wasm={wasm} seed {seed}: get {probe:?}");
                }
            }
        }
    }
}

#[test]
fn a_flipped_bit_anywhere_is_reported_as_corrupt() {
    for serializer in SERIALIZERS {
        for wasm in [true, false] {
            let records = records(7, 40, false);
            let (data, index) = write_segment(serializer, wasm, &records, 7);
            let probes = probes(&records);
            for (file, len) in [("data", data.len()), ("index", index.len())] {
                for at in 0..len {
                    let (mut d, mut i) = (data.clone(), index.clone());
                    let target = if file == "data" { &mut d } else { &mut i };
                    target[at] ^= 1 << (at % 8);
                    let outcome = reader(serializer, wasm, &d, &i).and_then(|mut r| read_all(&mut r, &probes));
                    match outcome {
                        Err(e) => {
                            let message = e.to_string();
                            assert!(message.contains("corrupt"), "{serializer} wasm={wasm}: {file} byte {at}: {message}");
                        }
                        Ok(_) => panic!("{serializer} wasm={wasm}: a flipped bit in {file} byte {at} went unnoticed"),
                    }
                }
            }
        }
    }
}
