#!/usr/bin/env bash
# The concurrent seeds at 1-16 writers, for a machine with 16 cores or
# more (this repository's own has 2, so no test depends on this script):
# CASSANDRA-19429 (one shard lock against none) and CASSANDRA-20226 (a
# concurrent skiplist and allocator against the same under the lock, and
# a sharded trie), and CASSANDRA-8457 with a commit log (each writer's
# own record without the lock against a group's under it). Each point writes `ops` rows per writer, so every
# point runs as long a steady state as the one-writer point does.
#   benches/many-cores.sh OUT_DIR [OPS_PER_WRITER]
# Records under OUT_DIR/<seed>/: the command, the configs as run, the
# machine (nproc, lscpu, memory) and memlab's own record and output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
per_writer=${2:-20000}
cd "$root"
cargo build --release --quiet
memlab=$root/target/release/memlab
{ date -u; nproc; lscpu 2>/dev/null || true; free -g 2>/dev/null || true; } > "$out/machine.txt"
for seed in 19429-concurrent 20226-concurrent 8457-concurrent-sync; do
    mkdir -p "$out/$seed"
    for writers in 1 2 4 8 16; do
        config="$out/$seed/threads-$writers.toml"
        # The seed as shipped, at one thread count, its ops scaled by it
        # and its profile found from where the copy lies.
        sed -e "s|^profile = \"../profiles/|profile = \"$root/benches/profiles/|" \
            -e "s|^threads = .*|threads = $writers|" \
            -e "s|^ops = .*|ops = $((per_writer * writers))|" \
            -e '/^\[sweep\]/,$d' "benches/seeds/$seed.toml" > "$config"
        command=("$memlab" bench "$config" --out "$out/$seed/threads-$writers" --max-rounds 6 --quiet --no-intervals)
        echo "${command[*]}" >> "$out/$seed/command.txt"
        "${command[@]}" 2>&1 | tee "$out/$seed/threads-$writers.txt"
    done
done
echo "records under $out; compare the points with: $memlab show $out/<seed>/threads-*/*"
