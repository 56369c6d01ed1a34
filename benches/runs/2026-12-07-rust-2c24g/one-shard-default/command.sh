#!/bin/bash
# No behaviour lost, part 2: the default comparison under the binary
# before this stop (7de120d) and after (e505f5f), alternating, from the
# repository root. Each binary is `cargo build --release` at its commit.
for i in 1 2; do
  for b in old head; do
    echo "== default $b $i $(date -u +%T)"
    ( /usr/bin/time -f "wall %e s, cpu user %U s, system %S s, max RSS %M KiB" /tmp/memlab-$b bench benches/default.toml --out /tmp/nb2/out-default-$b-$i --quiet --no-intervals ) > /tmp/nb2/default-$b-$i.txt 2>&1
    tail -1 /tmp/nb2/default-$b-$i.txt
  done
done
echo finished $(date -u +%T)
