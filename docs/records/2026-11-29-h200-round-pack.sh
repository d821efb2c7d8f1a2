#!/usr/bin/env bash
# packb.sh B NAME/request-K...: packs these requests as batch B (q/NAME/request-B) into .device-run/qB.tar.xz
set -euo pipefail
B=$1; shift
cd /work/gpu-queue
rm -rf /tmp/pack$B && mkdir -p /tmp/pack$B/q
for d in "$@"; do
  [ -f $d/READY ] || { echo "not ready: $d"; exit 1; }
  name=$(dirname $d); mkdir -p /tmp/pack$B/q/$name; cp -r $d /tmp/pack$B/q/$name/request-$B
  [ -f $d/BUDGET ] || echo 90 > /tmp/pack$B/q/$name/request-$B/BUDGET
done
(cd /tmp/pack$B && XZ_OPT=-T2 tar cJf /work/main/.device-run/q$B.tar.xz q)
ls -la /work/main/.device-run/q$B.tar.xz
