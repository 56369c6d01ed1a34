#!/bin/bash
# The concurrent checks' cost after the one checked shard: three runs of
# benches/concurrent-checks.toml under the binary at the commit in
# binaries.txt, back to back on this 2-core machine.
cd /work/main
for i in 1 2 3; do
  echo "== run $i $(date -u +%T)"
  ( time /tmp/memlab-head bench benches/concurrent-checks.toml --out /tmp/ccs/out-$i --quiet --no-intervals ) > /tmp/ccs/output-$i.txt 2>&1
  grep -E "^Winner|^Verdict|vs first|^No decision|unchecked  |checked  " /tmp/ccs/output-$i.txt | head -6
  grep -E "real|user" /tmp/ccs/output-$i.txt
done
