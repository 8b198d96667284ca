"""The benchmark script stays runnable (tiny settings; real model when pulled)."""
from __future__ import annotations

import json

import pytest

from kgsql.lab.llm_bench import main, schema_prefix
from kgsql.llm.models import get_model

SMALL = "qwen2.5-coder-0.5b"


def test_schema_prefix_scales_with_target() -> None:
    short, long = schema_prefix(200), schema_prefix(1500)
    assert "CREATE TABLE" in short and len(long) > 5 * len(short) / 2
    assert 4000 < len(long) < 7000  # ~1,500 tokens of DDL


@pytest.mark.llm
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not get_model(SMALL).is_pulled(),
                    reason=f"local model {SMALL} not pulled; run: python -m kgsql.llm pull {SMALL}")
def test_bench_smoke_writes_json(tmp_path, capsys) -> None:
    out = tmp_path / "b.json"
    assert main(["--models", SMALL, "--prefix-tokens", "120", "--repeats", "1", "--gen-tokens", "4",
                 "--ctx", "1024", "--out", str(out)]) == 0
    r = json.loads(out.read_text())["results"][0]
    assert r["model"] == SMALL and r["prompt_tokens_per_s"] > 0 and r["generation_tokens_per_s"] > 0
    assert r["cached_tokens_on"][0] > 0 and r["cached_tokens_off"][0] == 0  # the flag really toggles reuse
    assert "ttft_prefix_cache_on_s" in capsys.readouterr().out
