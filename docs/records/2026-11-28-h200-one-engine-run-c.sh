#!/usr/bin/env bash
# GPU run C: the landed tree's GPU suite; 16 ndconv processes at once on one GPU (issue 48's
# faults under load): each output equal to a single run's or a clean failure; and the GPU's
# memory taken by another process: what --device auto and --device cuda then do.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
o=$OUT
t0=$(date +%s)
timeout 300 ./new_ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1; echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"
grep -E '^\[  (PASSED|FAILED) |FAILED' $o/gpu_tests.txt | tail -4
s=../sample_volumes/cardiacfield_example_vol.nii.gz
mkdir -p load
./new_ndconv smooth $s load/ref.nii --sigma 2 --device cuda -q; echo "single rc=$?"
for i in $(seq 1 16); do (./new_ndconv smooth $s load/out$i.nii --sigma 2 --device cuda -q 2> load/err$i.txt; echo $? > load/rc$i) & done; wait
ok=0; failed=0; differ=0
for i in $(seq 1 16); do rc=$(cat load/rc$i); if [ "$rc" = 0 ]; then if cmp -s load/ref.nii load/out$i.nii; then ok=$((ok+1)); else differ=$((differ+1)); fi; else failed=$((failed+1)); head -1 load/err$i.txt; ls load/out$i.nii 2>/dev/null; fi; done
echo "16 at once on one GPU: $ok identical, $failed failed, $differ different"
python3 - <<'PY' &
import cupy, time
free, total = cupy.cuda.runtime.memGetInfo()
hog = cupy.empty(int(free - (256 << 20)), dtype=cupy.uint8)
print(f"hog holds {hog.nbytes/2**30:.1f} GiB of {total/2**30:.1f}", flush=True)
open("hog.ready", "w").close()
time.sleep(60)
PY
for k in $(seq 1 60); do [ -f hog.ready ] && break; sleep 1; done
./new_ndconv smooth $s load/auto.nii --sigma 2 -v > load/auto.txt 2>&1; echo "auto under a full GPU rc=$?"; grep -iE "plan|cpu|gpu|error" load/auto.txt | head -5
./new_ndconv smooth $s load/cuda.nii --sigma 2 --device cuda > load/cuda.txt 2>&1; echo "cuda under a full GPU rc=$?"; head -2 load/cuda.txt; ls load/cuda.nii 2>/dev/null
./new_ndconv median $s load/median.nii --radius 1 -v > load/median.txt 2>&1; echo "median auto under a full GPU rc=$?"; grep -iE "plan|cpu|gpu|error" load/median.txt | head -3
kill %1 2>/dev/null; wait
echo "done at $(( $(date +%s) - t0 )) s"
