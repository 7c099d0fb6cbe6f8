#!/usr/bin/env python3
"""bench/measure.py - wall time and peak RSS of whole commands.

Runs each command N times and reports the median wall time and the
largest peak RSS (from wait4's rusage), so sonde and bpftrace are measured
the same way in the same run."""
import os
import statistics
import subprocess
import sys
import time


def run_once(argv):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    return wall, ru.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


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
