#!/usr/bin/env bash
# Instructions a row in WritePath::write, the checked shard before
# (old = 7de120d: Shard and SharedShard) and after (new = 19fcf21: one
# Shard over a &self runtime, Locked for one caller at a time; new2 =
# 9a621dd: a store's pool read in its call's turn, a call counted once;
# new4 = 3abd9c7: the SDK's one dispatch a kind), from this folder:
# `./command.sh old new` wrote summary.txt, `./command.sh new2`
# summary-new2.txt, and the same loop over skiplist-native and
# null-native alone summary-new4.txt. Each binary is
# `cargo build --release` at its commit, copied to /tmp/memlab-<side>.
set -euo pipefail
for v in null-wasm null-native skiplist-wasm skiplist-native lockfree-concurrent; do
    for side in "$@"; do
        out=/tmp/cg-$v-$side.out
        rm -rf /tmp/cg
        valgrind --tool=callgrind --toggle-collect='memlab::write_path::WritePath::write' --callgrind-out-file=$out \
            /tmp/memlab-$side bench $v.toml --quiet --no-intervals --out /tmp/cg > /dev/null 2>&1
        total=$(callgrind_annotate --auto=no --inclusive=yes $out | grep 'PROGRAM TOTALS' | awk '{gsub(",", "", $1); print $1}')
        printf '%-20s %-4s %14s instructions / 20000 rows = %6d per row\n' $v $side "$total" $((total / 20000))
    done
done
