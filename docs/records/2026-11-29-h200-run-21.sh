#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")" && tar xJf g0.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 60 g0/gauss_one_pass 2>&1 | tee $OUT/gauss_one_pass.log
timeout 40 g0/ndconv-perf bench --workload gauss3d_s2,gauss3d_s2_272 --quick > $OUT/gauss-main.log 2>&1; grep -E "^gauss" $OUT/gauss-main.log | cut -c1-220
