#!/bin/sh
# Interleaved A/B: c5a7f95 (before the tape's parameter probe) against
# dacde4b (with it), on params.toml (5 variants, 1 round each), 3 pairs.
# Binaries: OLD=/tmp/old/target/release/memlab, NEW=target/release/memlab.
for i in 1 2 3; do
  for b in old new; do
    /usr/bin/time -f "$b pair $i: %e s wall, %U s user, %S s sys" "$( [ $b = old ] && echo $OLD || echo $NEW )" bench params.toml --out out-$b-$i > $b-$i.txt 2>&1
    tail -1 $b-$i.txt >> times.txt
  done
done
