#!/bin/bash
# Interleaved: the checks' cost under the binary before and after.
cd /work/main
for i in 1 2 3; do
  for b in old new; do
    echo "== $b $i $(date -u +%T)"
    ( time /tmp/memlab-$b bench benches/concurrent-checks.toml --out /tmp/ccp/out-$b-$i --quiet --no-intervals ) > /tmp/ccp/$b-$i.txt 2>&1
    grep -E "^Winner|^Verdict|vs first|^No decision|unchecked  " /tmp/ccp/$b-$i.txt | head -4
    grep -E "real|user" /tmp/ccp/$b-$i.txt
  done
done
echo finished
