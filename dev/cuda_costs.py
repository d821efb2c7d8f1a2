#!/usr/bin/env python3
"""Runs dev/cuda_costs (built beside it or named by argv[1]) over a command's sizes, 3 times each,
and prints each run's steps and its end: the process's wall time less its last line."""
import subprocess, sys, time
binary = sys.argv[1] if len(sys.argv) > 1 else "./cuda_costs"
runs = [("keep", 0, 0, 0), ("keep", 82, 0, 0), ("keep", 0, 740, 0), ("keep", 82, 740, 0),
        ("free", 82, 740, 0), ("keep", 330, 740, 0), ("free", 330, 740, 0),
        ("keep", 0, 740, 330), ("reset", 0, 740, 330), ("reset-bg", 0, 740, 330)]
if len(sys.argv) > 2 and sys.argv[2] == "end":
    runs = runs[-3:]
for mode, pinned, device, host in runs:
    for rep in range(3):
        t0 = time.perf_counter()
        p = subprocess.run([binary, mode, str(pinned), str(device), str(host)], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        end = float(p.stdout.split("end ")[-1]) if "end " in p.stdout else float("nan")
        steps = "; ".join(" ".join(l.split()[:-4]) + " " + l.split()[-4] for l in p.stdout.splitlines() if " s (at " in l)
        print(f"{mode} pinned {pinned} MB device {device} MB host {host} MB: wall {wall:.3f} s, end at {end:.3f}, after {wall - end:.3f} | {steps}")
