#!/usr/bin/env bash
# benches/record.sh NAME CONFIG [ARGS...]: runs `target/release/memlab bench`
# and records it under benches/runs/<date>-rust-2c24g/NAME: the command,
# the config, the machine, the raw output, run.json and report.html.
set -uo pipefail
name=$1; config=$2; shift 2
dir=benches/runs/$(date +%F)-rust-2c24g/$name
mkdir -p "$dir"
{ echo "date: $(date -Iseconds)"; echo "uname: $(uname -srm)"; lscpu | grep -E '^(CPU\(s\)|Model name|Thread|Core|Socket|L2|L3)'; free -h; rustc --version; echo "memlab $(git rev-parse --short HEAD)"; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } > "$dir/machine.txt"
echo "target/release/memlab bench $config --out $dir/out $*" > "$dir/command.txt"
cp "$config" "$dir/config.toml"
target/release/memlab bench "$config" --out "$dir/out" "$@" > "$dir/output.txt" 2>&1
echo "exit: $?" >> "$dir/output.txt"
run=$(ls -d "$dir"/out/*/ | head -1)
mv "$run/run.json" "$run/report.html" "$dir/" && rm -rf "$dir/out"
echo "$dir"
