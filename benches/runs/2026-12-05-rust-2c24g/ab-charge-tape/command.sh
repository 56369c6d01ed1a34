#!/usr/bin/env bash
# Interleaved A/B of the default comparison: old = 1ad2c84 (before this session), new = eff9694.
cd /work/main
for i in 1 2; do
  for side in old new; do
    bin=target/release/memlab; [ $side = old ] && bin=/tmp/oldtarget/release/memlab
    /usr/bin/time -f "wall %e s, cpu user %U s, system %S s" -o /tmp/ab/$side-$i.time $bin bench benches/default.toml --out /tmp/ab/out-$side-$i > /tmp/ab/$side-$i.txt 2>&1
  done
done
echo done
