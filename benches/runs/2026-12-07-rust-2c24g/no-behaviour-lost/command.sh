#!/bin/bash
# No behaviour lost: the default comparison and fidelity.toml under the
# binary before issue 67's work (089a388) and after, alternating.
cd /work/main
for i in 1 2; do
  for b in old new2; do
    echo "== default $b $i $(date -u +%T)"
    ( /usr/bin/time -f "wall %e s, cpu user %U s, system %S s, max RSS %M KiB" /tmp/memlab-$b bench benches/default.toml --out /tmp/nb/out-default-$b-$i --quiet --no-intervals ) > /tmp/nb/default-$b-$i.txt 2>&1
    tail -1 /tmp/nb/default-$b-$i.txt
  done
done
for b in old new2; do
  echo "== fidelity $b $(date -u +%T)"
  ( /usr/bin/time -f "wall %e s, cpu user %U s, system %S s, max RSS %M KiB" /tmp/memlab-$b bench benches/fidelity.toml --out /tmp/nb/out-fidelity-$b --max-rounds 3 --quiet --no-intervals ) > /tmp/nb/fidelity-$b.txt 2>&1
  tail -1 /tmp/nb/fidelity-$b.txt
done
echo finished $(date -u +%T)
