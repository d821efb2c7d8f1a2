#!/usr/bin/env python3
"""Runs dev/cuda_costs (built beside it or named by argv[1]) over a command's sizes, 3 times each,
and prints each run's steps and its end: the process's wall time less its last line."""
import subprocess, sys, time
binary = sys.argv[1] if len(sys.argv) > 1 else "./cuda_costs"
for mode, pinned, device in [("keep", 0, 0), ("keep", 82, 0), ("keep", 0, 740), ("keep", 82, 740),
                             ("free", 82, 740), ("keep", 330, 740), ("free", 330, 740)]:
    for rep in range(3):
        t0 = time.perf_counter()
        p = subprocess.run([binary, mode, str(pinned), str(device)], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        end = float(p.stdout.split("end ")[-1]) if "end " in p.stdout else float("nan")
        steps = "; ".join(" ".join(l.split()[:-4]) + " " + l.split()[-4] for l in p.stdout.splitlines() if " s (at " in l)
        print(f"{mode} pinned {pinned} MB device {device} MB: wall {wall:.3f} s, end at {end:.3f}, after {wall - end:.3f} | {steps}")
