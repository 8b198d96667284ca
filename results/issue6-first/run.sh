#!/usr/bin/env bash
# Issue 6's first numbers with qwen2.5-coder-1.5b on 2 shared CPU cores: dail-sql vs kgsql
# (each with its default shots: dail-sql 5, kgsql 3) on
#   * a fixed random slice of Spider dev (seed 0), examples from train_7000.json;
#   * the spatial traffic+tourism questions, SSpa's cross-fold protocol ({traffic} <-> {tourism},
#     examples only from the other fold), dataset1 and dataset2, a fixed slice per split (seed 0).
# Resumable: re-running skips questions already logged; a larger --limit with the same seed extends a slice.
set -u
cd "$(dirname "$0")/../.."
. .venv/bin/activate
# A private graph folder: a CI run stopping the default embedded server must not stop this run.
export KGSQL_GRAPH_DIR=${KGSQL_GRAPH_DIR:-$HOME/.cache/kgsql/graph-eval}
SPIDER_N=${SPIDER_N:-30}
SPATIAL_N=${SPATIAL_N:-10}
timeout 14400 nice -n 5 python -m kgsql.eval run --dataset spider --data-dir /work/shared/data/spider \
    --method dail-sql,kgsql --limit "$SPIDER_N" --seed 0 --model qwen2.5-coder-1.5b \
    --out results/issue6-first/spider
timeout 14400 nice -n 5 python -m kgsql.eval run --dataset spatial --data-dir /work/shared/data/spatial \
    --protocol cross-fold --method dail-sql,kgsql --limit "$SPATIAL_N" --seed 0 --model qwen2.5-coder-1.5b \
    --timeout 120 --out results/issue6-first/spatial
