//! Entry points for fuzzing: each takes arbitrary bytes and must return,
//! never panic. `fuzz/` wraps them as cargo-fuzz targets; the test suite
//! drives them with seeded mutations of valid inputs on stable Rust.

use std::path::Path;

use memlab_sdk::Packed;

use crate::config::BenchConfig;
use crate::native;
use crate::segment;
use crate::workload::StreamFile;

/// A plugin file, as `memlab bench`, `check` and `componentize` take it:
/// validated and wrapped as a component (compiling is left to wasmtime's
/// own fuzzing).
pub fn plugin_module(bytes: &[u8]) {
    let _ = crate::plugin::to_component("fuzz.wasm", bytes);
}

/// A compile-cache file: only a payload that matches its sum and its
/// source would ever reach wasmtime's deserializer.
pub fn cache_file(bytes: &[u8]) {
    let _ = crate::plugin::verified_cache_payload(bytes, &"ab".repeat(32));
}

/// Bench config text, as `memlab bench` reads it.
pub fn config(bytes: &[u8]) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = BenchConfig::parse("fuzz.toml", text);
    }
}

/// A stream file, as a replaying bench reads it; replays every op. It is
/// parsed twice: as given, and with its CRC32 made to match, so damage
/// gets past the checksum to the structural checks behind it.
pub fn stream_file(bytes: &[u8]) {
    let _ = StreamFile::parse(Path::new("fuzz.mls"), bytes.to_vec());
    let mut fixed = bytes.to_vec();
    if fixed.len() >= 12 {
        let body = fixed.len() - 4;
        let crc = crc32fast::hash(&fixed[..body]);
        fixed[body..].copy_from_slice(&crc.to_le_bytes());
    }
    if let Ok(file) = StreamFile::parse(Path::new("fuzz.mls"), fixed) {
        let mut op = crate::workload::Op::default();
        for thread in 0..file.threads() {
            for index in 0..file.ops_for(thread) {
                file.op(thread, index, &mut op);
            }
        }
    }
}

/// A segment: the first byte picks the serializer, the next four split
/// the rest into data and index; the metadata parser gets all of it.
pub fn segment(bytes: &[u8]) {
    let _ = segment::parse_meta(bytes);
    let Some((&pick, rest)) = bytes.split_first() else { return };
    let Some((split, rest)) = rest.split_first_chunk::<4>() else { return };
    let at = (u32::from_le_bytes(*split) as usize).min(rest.len());
    let (data, index) = rest.split_at(at);
    let name = ["naive", "lean", "block"][pick as usize % 3];
    let Ok(mut reader) = native::bundled(name, memlab_sdk::Kind::Serializer).and_then(|s| s.reader(&[], data, index)) else { return };
    while let Ok(batch) = reader.next(4096) {
        if batch.is_empty() {
            break;
        }
    }
    let mut keys = Packed::new();
    keys.push(data.get(..8).unwrap_or(data));
    let _ = reader.get(keys);
}
