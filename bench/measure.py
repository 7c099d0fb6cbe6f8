#!/usr/bin/env python3
"""bench/measure.py - wall time and peak RSS of whole commands.

Runs each command N times and reports the median wall time and the
largest peak RSS, so sonde and bpftrace are measured the same way in the
same run. Peak RSS comes from GNU time (%M): a child spawned by Python
inherits Python's own high-water mark through vfork, which would report
some 14 MiB even for /bin/true."""
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(argv):
    with tempfile.NamedTemporaryFile("r") as f:
        t0 = time.perf_counter()
        rc = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", f.name]
                             + argv, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        lines = f.read().split()
        rss_kib = int(lines[-1]) if lines else 0
    return wall, rss_kib * 1024, rc


def measure(argv, runs):
    walls, rss, rc = [], 0, 0
    for _ in range(runs):
        w, r, c = run_once(argv)
        walls.append(w)
        rss = max(rss, r)
        rc = rc or c
    return statistics.median(walls), rss, rc


if __name__ == "__main__":
    runs = int(sys.argv[1])
    med, rss, rc = measure(sys.argv[2:], runs)
    print(f"{med * 1000:.2f} {rss / 1048576:.2f} {rc}")
