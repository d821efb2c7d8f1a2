#!/usr/bin/env bash
# One device call for a round of the GPU queue (/work/gpu-queue/PROTOCOL.md): every helper's
# request-N/run.sh in turn, each with L=$OUT/NAME, then the lead's own part (lead.sh).
# usage on the device: bash .device-run/round.sh N
set -uo pipefail
N=$1
cd "$(dirname "$0")"
REPO=$(cd .. && pwd)
W=$PWD/w; rm -rf $W; mkdir -p $W && tar xJf q$N.tar.xz -C $W
cd $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
for d in q/*/request-$N; do
  name=$(basename $(dirname $d)); [ -f $d/run.sh ] || continue
  export L=$OUT/$name; mkdir -p $L
  budget=$(cat $d/BUDGET 2>/dev/null || echo 120)
  s=$(date +%s)
  echo "===== $name (budget $budget s)"
  (cd $REPO && timeout $((budget + 15)) bash $W/$d/run.sh) > $L/console.txt 2>&1
  echo "rc=$? after $(( $(date +%s) - s )) s"
  head -c 2000 $L/console.txt | head -40
  (cd $OUT && find $name -size +3M -delete; tar czf $name.tgz $name && rm -rf $name)  # the device tool returns at most 8 files
done
echo "===== total $(( $(date +%s) - t0 )) s"
