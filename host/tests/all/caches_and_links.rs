//! Issue 66's security causes, through the binary: a compile cache that
//! others may write is not loaded from, no file is written through a
//! link planted at its name, and a record's `variants/` and kept
//! components are read only inside the run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use memlab::plugin::{EngineSettings, PluginHost};
use sha2::Digest;

use crate::support::{command, memlab, scratch};

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `memlab check PLUGIN` with `cache` as its compile cache.
fn check_with_cache(plugin: &str, cache: &Path) -> (bool, String) {
    let out = command(&["check", plugin, "--ops", "2000", "--size", "2000", "--seed", "7"]).env("MEMLAB_CACHE_DIR", cache).output().expect("memlab runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// A cache entry forged by someone who may write the folder (one
/// component's machine code under another's name, its sums recomputed)
/// is never run: a folder owned by another user, or that others may
/// write, is not used as a cache at all.
#[test]
fn a_forged_entry_in_a_cache_folder_others_may_write_is_never_run() {
    if !is_root() {
        eprintln!("skipped: making a folder of another user's needs root");
        return;
    }
    let dir = scratch("cache-forged");
    let cache = dir.join("cache");
    let host = PluginHost::new(EngineSettings { cache_dir: Some(dir.join("shas")), instance_slots: 0, ..Default::default() }).expect("engine");
    let (btree, vector) = (host.load("btree").expect("btree"), host.load("vector").expect("vector"));
    // Both compiled by the binary's own engine settings, into one cache.
    for plugin in ["btree", "vector"] {
        let (ok, text) = check_with_cache(plugin, &cache);
        assert!(ok, "{text}");
    }
    // Each of vector's entries made to hold btree's machine code of the
    // same engine, its sums recomputed, as anyone who may write there can.
    let entries: Vec<PathBuf> = std::fs::read_dir(&cache).expect("cache").flatten().map(|e| e.path()).collect();
    let mut forged = 0;
    for path in entries.iter().filter(|p| p.display().to_string().contains(&vector.sha256)) {
        let engine = path.file_name().expect("name").to_string_lossy().replace(&vector.sha256, &btree.sha256);
        let Ok(theirs) = std::fs::read(cache.join(engine)) else { continue };
        let body = [hex::decode(&vector.sha256).expect("hex"), theirs[64..].to_vec()].concat();
        let mut file = sha2::Sha256::digest(&body).to_vec();
        file.extend(&body);
        std::fs::write(path, file).expect("forge");
        forged += 1;
    }
    assert!(forged > 0, "no entry of vector's beside one of btree's: {entries:?}");
    std::os::unix::fs::chown(&cache, Some(65534), Some(65534)).expect("chown");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let (ok, text) = check_with_cache("vector", &cache);
    assert!(ok && text.contains("not using the cache folder") && text.contains("belongs to user 65534"), "{text}");
    assert!(!text.contains("btree"), "btree's code ran as vector:\n{text}");
    // Owned by this user but writable by others: the same.
    std::os::unix::fs::chown(&cache, Some(0), Some(0)).expect("chown back");
    let (ok, text) = check_with_cache("vector", &cache);
    assert!(ok && text.contains("other users may write to it (mode 777)") && !text.contains("btree"), "{text}");
}

/// A link planted at any name the cache's temporary file could have is
/// never written through: the entry is written under a random name,
/// created exclusively, then renamed into place.
#[test]
fn a_link_planted_at_the_caches_temporary_name_is_not_written_through() {
    let dir = scratch("cache-planted");
    let learn = dir.join("learn");
    let (ok, text) = check_with_cache("skiplist", &learn);
    assert!(ok, "{text}");
    let name = std::fs::read_dir(&learn).expect("cache").flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "cwasm")).expect("entry");
    let stem = name.file_stem().expect("stem").to_string_lossy().into_owned();
    let cache = dir.join("cache");
    std::fs::create_dir(&cache).expect("cache");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let victim = dir.join("victim");
    std::fs::write(&victim, b"not yours").expect("victim");
    // Every process id the next processes could take: the old scheme
    // named the temporary file by it.
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
    for pid in last..last + 3000 {
        std::os::unix::fs::symlink(&victim, cache.join(format!("{stem}.tmp{pid}"))).expect("plant");
    }
    let (ok, text) = check_with_cache("skiplist", &cache);
    assert!(ok, "{text}");
    assert_eq!(std::fs::read(&victim).expect("victim"), b"not yours", "the cache wrote through a planted link");
    let written = cache.join(name.file_name().expect("name"));
    assert!(std::fs::symlink_metadata(&written).expect("the entry").is_file());
}

/// A quick run kept whole, with one variant; its directory.
fn run_of(dir: &Path, serializer: &str) -> PathBuf {
    let config = dir.join("one.toml");
    std::fs::write(
        &config,
        format!(
            "[workload]\nseed = 5\nops = 300\npartitions = {{ count = 200 }}\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = {serializer:?}\n"
        ),
    )
    .expect("config");
    let out = dir.join("runs");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    std::fs::read_dir(&out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run")
}

/// The run's first variant record, as `save_variant` writes one (cut
/// from the record's text: a `serde_json::Value` would round its u128
/// digests), as its second repeat, outside the run.
fn outside_variant(run: &Path, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(run.join("run.json")).expect("record");
    let start = text.find("\"variants\": [").expect("variants") + "\"variants\": [".len();
    let start = start + text[start..].find('{').expect("a variant");
    let (mut depth, mut in_string, mut escaped, mut end) = (0, false, false, start);
    for (i, c) in text[start..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '{' if !in_string => depth += 1,
            '}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    end = start + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let variant = text[start..end].replacen("\"repeat\": 1,", "\"repeat\": 2,", 1);
    assert!(variant.contains("\"repeat\": 2,"), "{variant}");
    let path = dir.join("elsewhere.json");
    std::fs::write(&path, variant).expect("write");
    path
}

/// `variants/` and every file in it are names under the run, through the
/// one resolver: a link out of the run, as a file or as the folder, is
/// refused, and so is one file linked under two names, before any read.
#[test]
fn a_records_variants_are_read_only_inside_the_run_and_each_once() {
    let dir = scratch("variants-links");
    let run = run_of(&dir, "lean");
    let show = |run: &Path| memlab(&["show", run.to_str().expect("path")]);
    let (ok, text) = show(&run);
    assert!(ok, "{text}");
    let outside = outside_variant(&run, &dir);
    let variants = run.join("variants");
    std::fs::create_dir(&variants).expect("variants");
    std::os::unix::fs::symlink(&outside, variants.join("000001.json")).expect("link");
    let (ok, text) = show(&run);
    assert!(!ok && text.contains("000001.json") && text.contains("leads out of the run's directory"), "{text}");
    // The folder itself a link out of the run.
    std::fs::remove_dir_all(&variants).expect("remove");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("dir");
    std::fs::copy(&outside, elsewhere.join("000001.json")).expect("copy");
    std::os::unix::fs::symlink(&elsewhere, &variants).expect("link the folder");
    let (ok, text) = show(&run);
    assert!(!ok && text.contains("leads out of the run's directory"), "{text}");
    // One record under two names: refused as the same file.
    std::fs::remove_file(&variants).expect("unlink");
    std::fs::create_dir(&variants).expect("variants");
    std::fs::copy(&outside, variants.join("000001.json")).expect("copy");
    std::fs::hard_link(variants.join("000001.json"), variants.join("000002.json")).expect("hard link");
    let (ok, text) = show(&run);
    assert!(!ok && text.contains("000002.json") && text.contains("the same file as another record of this run"), "{text}");
    // Held apart from a record memlab wrote itself: a plain later variant is taken.
    std::fs::remove_file(variants.join("000002.json")).expect("unlink");
    let (ok, text) = show(&run);
    assert!(ok, "{text}");
}

/// A kept component that is a link out of the run is refused by
/// `verify`, as any other link out, not used because its bytes match.
#[test]
fn a_kept_component_linked_out_of_the_run_is_refused() {
    let dir = scratch("kept-component-link");
    let run = run_of(&dir, &crate::support::liar_plugin("liar-flush"));
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok, "{text}");
    let kept = std::fs::read_dir(run.join("components")).expect("components").flatten().map(|e| e.path()).next().expect("a kept component");
    let outside = dir.join("kept.wasm");
    std::fs::rename(&kept, &outside).expect("move out");
    std::os::unix::fs::symlink(&outside, &kept).expect("link");
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(!ok && text.contains("leads out of the run's directory"), "{text}");
}
