#!/usr/bin/env bash
# Follow-up to run.sh: is evidence written by the 1.5B model worth its tokens? kgsql without the
# evidence steps on the same Spider dev slice (seed 0). Resumable like run.sh.
set -u
cd "$(dirname "$0")/../.."
. .venv/bin/activate
export KGSQL_GRAPH_DIR=${KGSQL_GRAPH_DIR:-$HOME/.cache/kgsql/graph-eval}
timeout 7200 nice -n 5 python -m kgsql.eval run --dataset spider --data-dir /work/shared/data/spider \
    --method kgsql-evidence --limit "${SPIDER_N:-30}" --seed 0 --model qwen2.5-coder-1.5b \
    --out results/issue6-first/spider/dev/kgsql-evidence/3-shot  # the cell folder run.sh-style runs read
