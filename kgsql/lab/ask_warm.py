"""Wall time of ``kgsql ask`` as a user runs it: in-process, and warm through the service it starts.

``python -m kgsql.lab.ask_warm --db geo [--question Q1 --question Q2] [--report ask_warm.json]``

Runs ``kgsql ask`` as subprocesses on the caller's graph and model, in a fresh
cache folder (no response cache or retrieval index from earlier runs, no service
of the caller's; the pulled models are the caller's):
first with ``KGSQL_SERVICE_IDLE=0`` (answered in-process: the model server
starts and the encoder loads each time), then with the default, where the first
``ask`` starts ``kgsql serve`` in the background and later ones go to it. Prints
one row per step (wall time, and the part outside the model's own calls) and writes
the rows as JSON. Issue 30's goals: a repeated question <= 1 s, a new one with
nothing reloaded, and the first answer of a service this ask started <= 10 s
plus model time.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_QUESTIONS = ("Which river is the longest?", "How many cities are there?")


def timed_ask(db: str, question: str, env: dict[str, str]) -> tuple[float, int, float]:
    """Wall seconds, exit code and the answer's model seconds (its calls' own times, ``--json --trace``)."""
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "kgsql", "ask", "--db", db, "--json", "--trace", question], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if run.returncode not in (0, 2):  # 2: answered, the SQL failed
        print(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}", file=sys.stderr)
    try:
        calls = json.loads(run.stdout).get("prompts") or []
    except ValueError:
        calls = []
    return seconds, run.returncode, sum(float(c.get("latency_s") or 0) for c in calls)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.ask_warm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True)
    p.add_argument("--question", action="append", default=None, help="two questions (default: two about geo)")
    p.add_argument("--report", type=Path, default=Path("ask_warm.json"))
    args = p.parse_args(argv)
    first, second = (args.question or list(DEFAULT_QUESTIONS))[:2]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgsql-ask-warm-") as cache:
        from kgsql.llm.config import ENV_MODELS_DIR, models_dir

        env = dict(os.environ, KGSQL_CACHE_DIR=cache, **{ENV_MODELS_DIR: str(models_dir())})  # the pulled models
        env.pop("KGSQL_NO_SERVICE", None)
        cold = dict(env, KGSQL_SERVICE_IDLE="0")
        steps = [("in-process, first question", first, cold), ("in-process, the same again", first, cold),
                 ("service started by this ask, a new question", second, env),
                 ("through the service, the same again", second, env),
                 ("through the service, another new question", first + " Give its name.", env)]
        try:
            for label, question, step_env in steps:
                seconds, rc, model_s = timed_ask(args.db, question, step_env)
                rows.append({"step": label, "question": question, "seconds": round(seconds, 2),
                             "model_s": round(model_s, 2), "outside_model_s": round(seconds - model_s, 2), "exit": rc})
                print(f"{seconds:7.2f} s  ({seconds - model_s:6.2f} s outside the model)  {label}", flush=True)
        finally:
            state = Path(cache) / "service.json"
            if state.exists():
                os.kill(json.loads(state.read_text())["pid"], signal.SIGTERM)
                deadline = time.monotonic() + 60
                while state.exists() and time.monotonic() < deadline:
                    time.sleep(0.2)
    args.report.write_text(json.dumps({"db": args.db, "model": os.environ.get("KGSQL_LOCAL_MODEL", ""),
                                       "rows": rows}, indent=2) + "\n")
    print(f"report: {args.report}")
    failed = [r["step"] for r in rows if r["exit"] not in (0, 2)]
    if failed:
        print(f"kgsql.lab.ask_warm: error: ask failed at: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
