#!/usr/bin/env bash
# GPU run 41 (one H200): round 7 of the GPU queue (helper tc-bank's request 2, its final), then
# the lead's part (lead-41.sh: the command line's suite with the GPU).
cd "$(dirname "$0")"
bash round.sh 7
bash lead-41.sh
