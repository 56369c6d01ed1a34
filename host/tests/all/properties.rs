//! Properties over generated inputs (proptest, which shrinks a failure to
//! a small case): the router's sort keys order as (token, partition,
//! clustering) does; a packed batch survives its wire form; a stream file
//! replays its profile's stream for any seed, thread count and length;
//! every bundled commit-log format gives back exactly the rows it was
//! handed, and finds any changed byte or cut.

use memlab::router::sort_key;
use memlab::workload::{Generator, Op, Profile, StreamFile, write_stream_file};
use memlab_sdk::Packed;
use proptest::prelude::*;

/// Short keys with many zero bytes, where the escaping matters.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(0u8), Just(0xff), any::<u8>()], 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn sort_keys_compare_as_token_partition_clustering(
        a in (any::<i64>(), key(), key()),
        b in (prop_oneof![Just(None), any::<i64>().prop_map(Some)], key(), key()),
    ) {
        // Half the time the tokens tie, so the partition decides.
        let b = (b.0.unwrap_or(a.0), b.1, b.2);
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        sort_key(a.0, &a.1, &a.2, &mut ka);
        sort_key(b.0, &b.1, &b.2, &mut kb);
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b), "keys {:02x?} and {:02x?}", ka, kb);
    }

    #[test]
    fn a_packed_batch_survives_its_wire_form(records in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..30)) {
        let mut packed = Packed::new();
        for r in &records {
            packed.push(r);
        }
        let lent = packed.with_wire(|wire| wire.clone());
        prop_assert_eq!(packed.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(), records.clone(), "lending the wire form changed the batch");
        let back = Packed::from_wire(lent).expect("a batch's own wire form reads back");
        prop_assert_eq!(back.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(), records);
    }

    #[test]
    fn any_bytes_as_a_wire_form_are_refused_or_read_never_panic(wire in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(p) = Packed::from_wire(wire) {
            // What reads must be whole: every record within the data.
            prop_assert!(p.iter().map(<[u8]>::len).sum::<usize>() <= p.data_len());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_stream_file_replays_its_profile(seed in any::<u64>(), threads in 1usize..4, ops in 0u64..300) {
        let profile = Profile { seed, threads, ops, ..Profile::default() };
        let path = crate::support::scratch("property-stream").join(format!("{seed}-{threads}-{ops}.mlstream"));
        let (fingerprint, written) = write_stream_file(&profile, &path).expect("write");
        prop_assert_eq!(written, ops);
        let file = StreamFile::read(&path).expect("its own file reads");
        prop_assert_eq!(file.fingerprint(), fingerprint);
        let mut generator = Generator::new(&profile);
        let (mut want, mut got) = (Op::default(), Op::default());
        let mut replayed = 0;
        for thread in 0..threads {
            for index in 0..file.ops_for(thread) {
                generator.op(thread, index, &mut want);
                prop_assert!(file.op(thread, index, &mut got));
                prop_assert_eq!(&got, &want, "thread {} op {}", thread, index);
                replayed += 1;
            }
        }
        prop_assert_eq!(replayed, ops);
    }
}

/// Batches of rows of any bytes, empty ones and empty rows included.
fn log_batches() -> impl Strategy<Value = Vec<Vec<Vec<u8>>>> {
    prop::collection::vec(prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..20), 1..12)
}

/// A bundled format's segment of `batches`, and what the host appended.
fn logged(format: &str, batches: &[Vec<Vec<u8>>]) -> (memlab::seam::CommitLogFormat, Vec<u8>, memlab::commitlog::Appended) {
    let mut log = memlab::native::bundled(format, memlab::seam::Kind::CommitLog).and_then(|l| l.commitlog_format(&[], 0)).expect("a bundled format");
    let (mut bytes, mut appended) = (Vec::new(), memlab::commitlog::Appended::default());
    for batch in batches {
        let mut rows = Packed::new();
        batch.iter().for_each(|r| rows.push(r));
        bytes.extend(log.encode(&mut rows).expect("encode"));
        appended.note(batch.iter().map(|r| memlab::seam::ledger::hash(r)), bytes.len() as u64);
    }
    (log, bytes, appended)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_log_format_round_trips_and_finds_damage_and_tears(
        batches in log_batches(),
        format in prop_oneof![Just("plain"), Just("batched"), Just("lz4")],
        padding in 0usize..5000,
        (flip, bit, cut) in (any::<prop::sample::Index>(), 0u32..8, any::<prop::sample::Index>()),
        max_rows in 1u32..50,
    ) {
        use memlab::verify::log::{Copy, hold};
        let (mut log, bytes, appended) = logged(format, &batches);
        let mut padded = bytes.clone();
        padded.resize(bytes.len() + padding, 0);
        let whole = log.replay_all(&padded, max_rows).expect("replay");
        prop_assert_eq!(hold(&whole, Copy::Whole, &appended), Ok(()));
        let at = flip.index(bytes.len());
        let mut damaged = bytes.clone();
        damaged[at] ^= 1 << bit;
        let replayed = log.replay_all(&damaged, max_rows).expect("replay");
        prop_assert_eq!(hold(&replayed, Copy::Damaged(at as u64), &appended), Ok(()));
        let cut = cut.index(bytes.len());
        let replayed = log.replay_all(&bytes[..cut], max_rows).expect("replay");
        prop_assert_eq!(hold(&replayed, Copy::Cut(cut as u64), &appended), Ok(()));
    }
}
