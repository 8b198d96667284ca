#!/usr/bin/env bash
# Issue 3, BIRD dev schema linking (no evidence, no database files here): the shipped Spider-train
# calibration with its miss breakdown, and a leave-one-database-out calibration on BIRD itself
# (each database's questions selected by models and thresholds fitted on the other ten).
set -eu
cd "$(dirname "$0")/../.."
. .venv/bin/activate
export OPENBLAS_NUM_THREADS=1
BIRD=${BIRD:-/work/shared/data/bird/dev_2024}
OUT=results/issue3-bird
# --sweep traces the recall/token curve: how many tokens would 0.90 cost?
python -m kgsql.eval linking --dataset bird --data-dir "$BIRD" --json $OUT/bird_dev.json --threads 1 \
    --sweep 0.3:0.05,0.1:0.02,0.05:0.01,0.03:0.005,0.02:0.002,0.01:0.001,0.005:0.0005,0.002:0.0002 | tee $OUT/bird_dev.txt
python -m kgsql.retrieve.calibrate --dataset bird --data-dir "$BIRD" --limit 5000 --budget 0.25 --pooled-ratio \
    --leave-one-database-out --json $OUT/bird_lodo.json --threads 1 | tee $OUT/bird_lodo.txt
# The same benchmark with BIRD's oracle evidence appended to each question (what the missing knowledge is worth).
python -m kgsql.eval linking --dataset bird --data-dir "$BIRD" --with-evidence --json $OUT/bird_dev_with_evidence.json --threads 1 | tee $OUT/bird_dev_with_evidence.txt
