#!/usr/bin/env python3
"""The sync latency of this machine's disk, which every commit-log ratio
depends on: appends of SIZE bytes to a file, each followed by fdatasync
(buffered) or written with O_DIRECT|O_DSYNC (direct, aligned), N times.
Prints p50, p99, p99.9 and max per mode.
    benches/disk-sync.py [DIR] [N] [SIZE]"""
import mmap, os, sys, time

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]

def run(path, n, size, direct):
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if direct:
        flags |= os.O_DIRECT | os.O_DSYNC
    fd = os.open(path, flags, 0o644)
    buf = mmap.mmap(-1, size)  # page-aligned, as O_DIRECT wants
    buf.write(b"x" * size)
    lat = []
    try:
        for _ in range(n):
            t = time.perf_counter_ns()
            os.write(fd, buf)
            if not direct:
                os.fdatasync(fd)
            lat.append(time.perf_counter_ns() - t)
    finally:
        os.close(fd)
        os.unlink(path)
    return lat

def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    for mode, direct in (("buffered+fdatasync", False), ("O_DIRECT|O_DSYNC", True)):
        try:
            lat = run(os.path.join(d, f"disk-sync-{os.getpid()}"), n, size, direct)
        except OSError as e:
            print(f"{mode}: not available here ({e})")
            continue
        us = lambda ns: ns / 1e3
        print(f"{mode}: {n} appends of {size} B: p50 {us(pct(lat, 50)):.1f} us, p99 {us(pct(lat, 99)):.1f} us, "
              f"p99.9 {us(pct(lat, 99.9)):.1f} us, max {us(max(lat)):.1f} us, mean {us(sum(lat) / n):.1f} us")

main()
