#!/usr/bin/env bash
# GPU run 35 (one H200): the tensor-core dense rows against CuPy and PyTorch (cuDNN FP32, TF32,
# fp16) on the same 8-bit data in the same process (scripts/peers.py), the merged tree's binary.
set -uo pipefail
cd "$(dirname "$0")"
rm -rf bin && tar xJf final-bin.tar.xz
L=${OUT:-/tmp}; cd ..
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version(), 'cupy', cupy.__version__)"
timeout 240 python3 scripts/peers.py --ndconv .device-run/bin/ndconv-perf --out $L/peers-tc.json \
  --bench-json $L/bench-tc.json --workload dense3d_7_tc,dense3d_11_tc --reps 20 > $L/peers-tc.log 2>&1
echo "peers rc=$?"; grep -vE "^\[#|^measuring" $L/peers-tc.log | tail -22
