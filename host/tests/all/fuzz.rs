//! The fuzz entry points (`memlab::fuzz`, wrapped by `fuzz/` for
//! cargo-fuzz) under seeded mutations of valid inputs: bit flips, byte
//! swaps, truncation, insertion, duplication. None may panic.

use memlab::workload::{SplitMix, write_stream_file};
use memlab_sdk::{Cell, Packed, encode_flush_record, encode_row};

use crate::support::scratch;

const ROUNDS: usize = 20_000;

fn mutate(rng: &mut SplitMix, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = bytes.len().max(1) as u64;
        match rng.below(6) {
            0 if !bytes.is_empty() => {
                let at = rng.below(len) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
            1 if !bytes.is_empty() => {
                let at = rng.below(len) as usize;
                bytes[at] = rng.below(256) as u8;
            }
            2 => bytes.truncate(rng.below(len + 1) as usize),
            3 => {
                let at = rng.below(len) as usize;
                let junk: Vec<u8> = (0..rng.below(16)).map(|_| rng.below(256) as u8).collect();
                bytes.splice(at.min(bytes.len())..at.min(bytes.len()), junk);
            }
            4 if bytes.len() > 8 => {
                let (a, b) = (rng.below(len) as usize, rng.below(len) as usize);
                let (a, b) = (a.min(b), a.max(b));
                let chunk = bytes[a..b.min(a + 64)].to_vec();
                bytes.splice(b..b, chunk);
            }
            _ => {
                // Interesting integers where lengths live.
                if bytes.len() >= 4 {
                    let at = rng.below(len - 3) as usize;
                    let v = [0u32, 1, 0x7fff_ffff, u32::MAX, 0x8000_0000][rng.below(5) as usize];
                    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    bytes
}

fn drive(name: &str, seeds: &[Vec<u8>], target: fn(&[u8])) {
    drive_n(name, seeds, target, ROUNDS);
}

fn drive_n(name: &str, seeds: &[Vec<u8>], target: fn(&[u8]), rounds: usize) {
    let mut rng = SplitMix::new(&[name.len() as u64, 0xf022]);
    for seed in seeds {
        target(seed);
    }
    for _ in 0..rounds {
        let seed = &seeds[rng.below(seeds.len() as u64) as usize];
        target(&mutate(&mut rng, seed));
    }
    target(&[]);
}

#[test]
fn config_parsing_survives_mutations() {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace");
    let seeds: Vec<Vec<u8>> = ["benches/default.toml", "benches/coalescing.toml", "benches/profiles/mixed.toml"]
        .iter()
        .map(|p| std::fs::read(workspace.join(p)).expect("seed file"))
        .collect();
    drive("config", &seeds, memlab::fuzz::config);
}

#[test]
fn stream_file_reading_survives_mutations() {
    let dir = scratch("fuzz-stream");
    let mut profile = memlab::workload::Profile { ops: 40, ..Default::default() };
    profile.mix.read = 1;
    profile.mix.scan = 1;
    write_stream_file(&profile, &dir.join("s.mls")).expect("write");
    let seeds = vec![std::fs::read(dir.join("s.mls")).expect("read")];
    drive("stream_file", &seeds, memlab::fuzz::stream_file);
}

#[test]
fn segment_reading_survives_mutations() {
    let mut seeds = Vec::new();
    for (pick, name) in ["naive", "lean", "block"].iter().enumerate() {
        let mut w = memlab::native::bundled(name, memlab::seam::Kind::Serializer).and_then(|s| s.serializer(&[], 0)).expect("writer");
        let mut records = Packed::new();
        for i in 0..30u32 {
            let key = format!("key-{i:03}");
            let mut row = Vec::new();
            encode_row(&mut row, b"pk", key.as_bytes(), u64::from(i), i % 7 == 0, [Cell { column: 0, value: b"value" }].into_iter().filter(|_| i % 7 != 0));
            records.push_with(|buf| encode_flush_record(buf, key.as_bytes(), &row));
        }
        let mut data = w.write(records).expect("write");
        let (tail, finished) = w.finish().expect("finish");
        data.extend(tail);
        let mut seed = vec![pick as u8];
        seed.extend((data.len() as u32).to_le_bytes());
        seed.extend(&data);
        seed.extend(&finished.index);
        seeds.push(seed);
    }
    drive("segment", &seeds, memlab::fuzz::segment);
}

#[test]
fn plugin_loading_survives_mutations() {
    let module = std::fs::read(memlab_test_plugins::core_modules().join("memtable_null.wasm")).expect("a core module");
    // Validation and wrapping are the slow part: fewer rounds.
    drive_n("plugin", &[module], memlab::fuzz::plugin_module, 300);
}

#[test]
fn cache_files_survive_mutations() {
    use sha2::Digest;
    let source = "ab".repeat(32);
    let body = [vec![0xab; 32], b"precompiled code would be here".to_vec()].concat();
    let mut file = sha2::Sha256::digest(&body).to_vec();
    file.extend(&body);
    assert!(memlab::plugin::verified_cache_payload(&file, &source).is_some());
    let mut flipped = file.clone();
    flipped[70] ^= 1;
    assert!(memlab::plugin::verified_cache_payload(&flipped, &source).is_none(), "a flipped bit must fail the check");
    assert!(memlab::plugin::verified_cache_payload(&file, &"cd".repeat(32)).is_none(), "another component's file must fail the check");
    drive("cache", &[file], memlab::fuzz::cache_file);
}

#[test]
fn a_damaged_cache_entry_is_recompiled_not_loaded() {
    let dir = scratch("fuzz-cache");
    let settings = || memlab::plugin::EngineSettings { cache_dir: Some(dir.clone()), instance_slots: 0, ..Default::default() };
    let first = memlab::plugin::PluginHost::new(settings()).expect("engine").load("null").expect("compiles");
    assert!(!first.cache_hit);
    let entry =
        std::fs::read_dir(&dir).expect("cache").flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "cwasm")).expect("a cache file");
    let mut bytes = std::fs::read(&entry).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&entry, bytes).expect("damage");
    let again = memlab::plugin::PluginHost::new(settings()).expect("engine").load("null").expect("recompiles");
    assert!(!again.cache_hit, "a damaged entry must not be loaded");
    let third = memlab::plugin::PluginHost::new(settings()).expect("engine").load("null").expect("loads");
    assert!(third.cache_hit, "the entry was rewritten");
}

/// Another component's cache file copied over this one's, its sum intact,
/// is not loaded: the file names the component it was compiled from.
#[test]
fn another_plugins_cache_file_copied_over_is_recompiled_not_loaded() {
    let dir = scratch("fuzz-cache-copied");
    let settings = || memlab::plugin::EngineSettings { cache_dir: Some(dir.clone()), instance_slots: 0, ..Default::default() };
    let host = memlab::plugin::PluginHost::new(settings()).expect("engine");
    let (btree, hostile) = (host.load("btree").expect("btree"), host.load(&crate::support::hostile_plugin()).expect("hostile"));
    let entry =
        |sha: &str| std::fs::read_dir(&dir).expect("cache").flatten().map(|e| e.path()).find(|p| p.display().to_string().contains(sha)).expect("an entry");
    std::fs::copy(entry(&btree.sha256), entry(&hostile.sha256)).expect("copy over");
    let again = memlab::plugin::PluginHost::new(settings()).expect("engine").load(&crate::support::hostile_plugin()).expect("recompiles");
    assert!(!again.cache_hit, "another component's cache file was loaded");
    assert_eq!(again.sha256, hostile.sha256);
}
