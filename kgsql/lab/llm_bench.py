"""``python -m kgsql.lab.llm_bench``: local-model speed on this machine, rerunnable.

Measures, per pulled model: load time; prompt-processing and generation
tokens/s (llama.cpp's own timings); and time-to-first-token for a ~1,500-token
schema prefix repeated with different questions, with prompt-prefix caching on
vs off (``cache_prompt`` in the request body). Prints a table and writes JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgsql.llm.config import cache_dir
from kgsql.llm.models import MODELS
from kgsql.llm.server import LocalModelServer, ServerTuning, default_threads

QUESTIONS = [
    "How many customers placed more than three orders in 2023?",
    "List the five products with the highest total revenue.",
    "Which employee manages the most stores?",
    "What is the average shipping delay per carrier?",
    "Find suppliers that never delivered late.",
    "Which region had the largest growth in sales between 2022 and 2023?",
]


def schema_prefix(target_tokens: int) -> str:
    """A synthetic but realistic schema prompt of roughly ``target_tokens`` tokens."""
    lines = ["You are a text-to-SQL assistant. Use only the tables below. Answer with one SQLite query.", ""]
    i = 0
    while sum(len(s) for s in lines) < target_tokens * 3.3:  # code tokenises at ~3.3 chars/token
        i += 1
        lines.append(
            f"CREATE TABLE table_{i} (id INTEGER PRIMARY KEY, name_{i} TEXT NOT NULL, "
            f"created_at DATE, amount_{i} REAL, status_{i} TEXT CHECK (status_{i} IN ('open','closed')), "
            f"parent_id INTEGER REFERENCES table_{max(1, i - 1)}(id)); -- rows of entity {i}"
        )
    return "\n".join(lines)


def _stream_once(client: Any, model: str, messages: list[dict], max_tokens: int, cache_prompt: bool) -> dict:
    """One streamed request: wall-clock TTFT plus llama.cpp's timings if it sends them."""
    t0 = time.perf_counter()
    ttft = None
    timings: dict = {}
    text = []
    stream = client.chat.completions.create(
        model=model, messages=messages, max_tokens=max_tokens, temperature=0, stream=True,
        extra_body={"cache_prompt": cache_prompt},
    )
    for chunk in stream:
        extra = getattr(chunk, "model_extra", None) or {}
        if isinstance(extra.get("timings"), dict):
            timings = extra["timings"]
        for ch in chunk.choices or []:
            piece = getattr(ch.delta, "content", None)
            if piece:
                if ttft is None:
                    ttft = time.perf_counter() - t0
                text.append(piece)
    total = time.perf_counter() - t0
    return {"ttft_s": ttft if ttft is not None else total, "total_s": total, "timings": timings,
            "text": "".join(text)}


def _median(xs: Sequence[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 3) if xs else None


def bench_model(name: str, *, prefix_tokens: int, repeats: int, gen_tokens: int, threads: int,
                n_ctx: int) -> dict[str, Any]:
    """All numbers for one model; the server is started fresh so load time is real."""
    import openai

    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    with LocalModelServer(name, n_ctx=n_ctx, threads=threads) as srv:
        load_s = time.perf_counter() - t0
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-no-key-required", max_retries=0, timeout=900)
        prefix = schema_prefix(prefix_tokens)
        qs = [QUESTIONS[i % len(QUESTIONS)] + f" (variant {i})" for i in range(2 * repeats + 1)]

        def msgs(q: str) -> list[dict]:
            return [{"role": "system", "content": prefix}, {"role": "user", "content": q}]

        _stream_once(client, srv.model, [{"role": "user", "content": "hi"}], 4, False)  # warm-up

        off = [_stream_once(client, srv.model, msgs(qs[i]), 8, cache_prompt=False) for i in range(repeats)]
        _stream_once(client, srv.model, msgs(qs[repeats]), 8, cache_prompt=True)  # primes the slot
        on = [_stream_once(client, srv.model, msgs(qs[repeats + 1 + i]), 8, cache_prompt=True)
              for i in range(repeats)]

        gen = client.chat.completions.create(
            model=srv.model, temperature=0, max_tokens=gen_tokens,
            messages=[{"role": "user", "content": "Write a long SQL tutorial with many example queries."}],
            extra_body={"ignore_eos": True, "cache_prompt": False},
        )
        gt = (gen.model_extra or {}).get("timings") or {}

    pp = [r["timings"].get("prompt_per_second") for r in off if r["timings"]]
    return {
        "model": name,
        "threads": threads,
        "n_ctx": n_ctx,
        "load_s": round(load_s, 2),
        "prefix_prompt_tokens": (off[0]["timings"] or {}).get("prompt_n") if off else None,
        "prompt_tokens_per_s": _median(pp),
        "generation_tokens_per_s": round(gt["predicted_per_second"], 2) if gt.get("predicted_per_second") else None,
        "generation_tokens": gt.get("predicted_n"),
        "ttft_prefix_cache_off_s": _median([r["ttft_s"] for r in off]),
        "ttft_prefix_cache_on_s": _median([r["ttft_s"] for r in on]),
        "cached_tokens_on": [r["timings"].get("cache_n") for r in on],
        "cached_tokens_off": [r["timings"].get("cache_n") for r in off],
        "repeats": repeats,
        # the machine may be shared: a high load average explains slow numbers
        "loadavg_1m_before": round(load_before, 2),
        "loadavg_1m_after": round(os.getloadavg()[0], 2),
    }


#: The settings grid of ``--sweep``: threads, then llama.cpp's speed settings (kgsql.llm.server.ServerTuning).
SWEEP_THREADS = (1, 2)
SWEEP_UBATCH = (256, 512)
SWEEP_FLASH = ("off", "on")
SWEEP_KV = ("f16", "q8_0")


def sweep_configs(max_threads: int) -> list[tuple[int, ServerTuning]]:
    """Every (threads, tuning) pair of the grid: all tunings at the most threads, defaults at fewer."""
    most = min(max(SWEEP_THREADS), max_threads)
    configs = [(most, ServerTuning(ubatch=u, flash_attn=f, kv_type=k))
               for u in SWEEP_UBATCH for f in SWEEP_FLASH for k in SWEEP_KV
               if not (f == "off" and k != "f16")]  # llama.cpp needs flash attention for a quantized V cache
    configs += [(t, ServerTuning()) for t in SWEEP_THREADS if t < most]
    return configs


def sweep_model(name: str, *, prefix_tokens: int, repeats: int, gen_tokens: int, n_ctx: int,
                configs: Sequence[tuple[int, ServerTuning]]) -> list[dict[str, Any]]:
    """Prompt and generation tokens/s of ``name`` for each (threads, tuning); answers compared to the first."""
    import openai

    rows = []
    reference: str | None = None
    for threads, tuning in configs:
        with LocalModelServer(name, n_ctx=n_ctx, threads=threads, tuning=tuning) as srv:
            client = openai.OpenAI(base_url=srv.base_url, api_key="sk-no-key-required", max_retries=0, timeout=900)
            prefix = schema_prefix(prefix_tokens)
            _stream_once(client, srv.model, [{"role": "user", "content": "hi"}], 4, False)  # warm-up
            runs = [_stream_once(client, srv.model, [{"role": "system", "content": prefix},
                                                     {"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}],
                                 gen_tokens, cache_prompt=False) for i in range(repeats)]
        answer = runs[0]["text"]
        reference = answer if reference is None else reference
        rows.append({
            "threads": threads, "tuning": tuning.describe(),
            "prompt_tokens_per_s": _median([r["timings"].get("prompt_per_second") for r in runs if r["timings"]]),
            "generation_tokens_per_s": _median([r["timings"].get("predicted_per_second") for r in runs
                                                if r["timings"]]),
            "same_answer_as_first": answer == reference,
        })
        print(f"  {threads} thread(s), {tuning.describe()}: {rows[-1]['prompt_tokens_per_s']} prompt tok/s, "
              f"{rows[-1]['generation_tokens_per_s']} generated tok/s", file=sys.stderr, flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kgsql.lab.llm_bench", description=__doc__)
    ap.add_argument("--models", nargs="*", default=None,
                    help=f"models to measure (default: every pulled one of {', '.join(sorted(MODELS))})")
    ap.add_argument("--prefix-tokens", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--gen-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=default_threads())
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--out", type=Path, default=cache_dir() / "bench" / "llm-bench.json")
    ap.add_argument("--sweep", action="store_true",
                    help="measure tokens/s across threads, micro-batch, flash attention and KV-cache type")
    args = ap.parse_args(argv)

    names = args.models or [n for n in sorted(MODELS) if MODELS[n].is_pulled()]
    if not names:
        print("no local model pulled; run: python -m kgsql.llm pull qwen2.5-coder-0.5b", file=sys.stderr)
        return 1
    if args.sweep:
        return _sweep(args, names)
    results = []
    for name in names:
        print(f"benchmarking {name} ...", file=sys.stderr, flush=True)
        results.append(bench_model(name, prefix_tokens=args.prefix_tokens, repeats=args.repeats,
                                   gen_tokens=args.gen_tokens, threads=args.threads, n_ctx=args.ctx))
    report = {
        "machine": {"cpus": default_threads(), "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine()},
        "results": results,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")

    cols = ["model", "load_s", "prefix_prompt_tokens", "prompt_tokens_per_s", "generation_tokens_per_s",
            "ttft_prefix_cache_off_s", "ttft_prefix_cache_on_s"]
    print("\t".join(cols))
    for r in results:
        print("\t".join(str(r[c]) for c in cols))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _sweep(args: argparse.Namespace, names: list[str]) -> int:
    report = {"machine": {"cpus": default_threads(), "processor": platform.processor() or platform.machine()},
              "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "sweeps": {}}
    for name in names:
        print(f"sweeping {name} ...", file=sys.stderr, flush=True)
        report["sweeps"][name] = sweep_model(name, prefix_tokens=args.prefix_tokens, repeats=args.repeats,
                                             gen_tokens=args.gen_tokens, n_ctx=args.ctx,
                                             configs=sweep_configs(args.threads))
    out = args.out.with_name(args.out.stem + "-sweep.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print("model\tthreads\tsettings\tprompt tok/s\tgenerated tok/s\tsame answer")
    for name, rows in report["sweeps"].items():
        for r in rows:
            print(f"{name}\t{r['threads']}\t{r['tuning']}\t{r['prompt_tokens_per_s']}\t"
                  f"{r['generation_tokens_per_s']}\t{r['same_answer_as_first']}")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
