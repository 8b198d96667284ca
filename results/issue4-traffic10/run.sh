#!/usr/bin/env bash
# Issue 4's note: 10 traffic questions (dataset1, first 10 by id), qwen2.5-coder-1.5b,
# full kgsql vs kgsql without tips, SpatiaLite knowledge and geographic descriptions.
# Resumable: re-running skips questions already in each records.jsonl.
set -u
cd "$(dirname "$0")/../.."
. .venv/bin/activate
COMMON=(--dataset spatial --data-dir /work/shared/data/spatial --split dataset1 --db traffic --limit 10
        --method kgsql --model qwen2.5-coder-1.5b --timeout 120)
timeout 10800 nice -n 5 python -m kgsql.eval run "${COMMON[@]}" --out results/issue4-traffic10/kgsql
timeout 10800 nice -n 5 python -m kgsql.eval run "${COMMON[@]}" --set tips=false --set sdbms=false --set geo=false \
    --out results/issue4-traffic10/kgsql-no-tips-sdbms-geo
