#!/usr/bin/env bash
# GPU run 40 (one H200): round 6 of the GPU queue (helper tc-bank's request 1),
# then the lead's part (lead-40.sh).
cd "$(dirname "$0")"
bash round.sh 6
bash lead-40.sh
