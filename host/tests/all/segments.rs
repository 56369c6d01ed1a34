//! Segment files on disk: a flipped bit anywhere in a segment's data,
//! index or metadata file is an error naming the file, never a wrong read.

use memlab::bench::{self, BenchOptions};
use memlab::config::BenchConfig;
use memlab::segment;

use crate::support::{host, options, scratch};

#[test]
fn a_flipped_bit_in_any_segment_file_is_caught() {
    let config = "[workload]\nops = 300\npartitions = { count = 1000 }\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"block\"\nmemtable_space = \"1MiB\"\n";
    let config = BenchConfig::parse("segments.toml", config).expect("config");
    let dir = scratch("segment-files");
    let options = BenchOptions { keep_segments: true, ..options(dir.clone()) };
    let result = bench::run(&host(), &config, &options, |_| {}).expect("bench");
    assert_eq!(result.variants[0].failure(), None);
    let seg_dir = result.variants[0].segments.as_ref().expect("kept segments are named in the record").under(&dir).expect("inside the run");
    let metas = segment::list(&seg_dir).expect("list");
    let meta = metas.first().expect("a segment");
    segment::load(meta).expect("the untouched segment loads");
    for ext in ["data", "index", "meta"] {
        let path = meta.with_extension(ext);
        let good = std::fs::read(&path).expect("read");
        for at in (0..good.len()).step_by((good.len() / 300).max(1)) {
            let mut bad = good.clone();
            bad[at] ^= 1 << (at % 8);
            std::fs::write(&path, &bad).expect("write");
            let Err(err) = segment::load(meta) else {
                panic!(
                    "{ext} byte {at} (bit {}) flipped, and the segment still loads: {:?}",
                    at % 8,
                    String::from_utf8_lossy(&good[at.saturating_sub(40)..(at + 40).min(good.len())])
                )
            };
            let err = err.to_string();
            assert!(err.contains(&path.display().to_string()) || err.contains(&meta.display().to_string()), "{ext} byte {at}: {err}");
        }
        std::fs::write(&path, &good).expect("restore");
    }
}
