#!/usr/bin/env bash
# A plugin author's first hour, timed: from a memlab cache with no plugin
# target yet, `memlab new` then `memlab check --build` of a first crate,
# then of a second crate of another kind, which finds wit-bindgen and the
# SDK already built in the shared target (issue 36's goal: the second
# crate's new + check --build within 60 s on this machine).
#   benches/author-loop.sh OUT_DIR
set -euo pipefail
memlab=$(cd "$(dirname "$0")/.." && pwd)/target/release/memlab
out=$1
rm -rf "$out/work" && mkdir -p "$out/work"
export MEMLAB_CACHE_DIR="$out/work/cache"
cd "$out/work"
for crate in "memtable first-table" "allocator second-alloc"; do
    set -- $crate
    start=$(date +%s.%N)
    for step in "new $1 $2" "check ./$2 --build"; do
        echo "== memlab $step"
        /usr/bin/time -f "(wall %e s, cpu user %U s, system %S s)" "$memlab" $step 2>&1
    done
    echo "== $2: new + check --build took $(echo "$(date +%s.%N) - $start" | bc) s wall"
done
echo "== the shared target's wit-bindgen builds: $(find "$MEMLAB_CACHE_DIR/plugin-target" -name 'libwit_bindgen-*.rlib' | wc -l)"
