"""``kgsql serve`` with no local model pulled: it starts (the page, the graph and SQL need no model) and a
question gets one JSON error naming the pull command (issue 30, item 8). A real process, a real graph."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from serve_process import serve_process

DB = "geo_nomodel"


def _get(url: str) -> tuple[int, object]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _post(url: str, body: dict[str, object]) -> tuple[int, object]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_serve_starts_without_a_model_and_questions_name_the_pull_command(graph_root: Path, example_db: Path,
                                                                          tmp_path: Path) -> None:
    env = dict(os.environ, KGSQL_GRAPH_DIR=str(graph_root), KGSQL_CACHE_DIR=str(tmp_path / "cache"),
               KGSQL_MODELS_DIR=str(tmp_path / "no-models"), KGSQL_NO_SERVICE="1")
    for var in ("KGSQL_GRAPH_URI", "NEO4J_URI", "KGSQL_CONFIG", "KGSQL_LLM_BASE_URL", "KGSQL_LLM_MODEL",
                "KGSQL_LOCAL_MODEL", "OPENAI_API_KEY"):
        env.pop(var, None)
    ingest = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(example_db), "--name", DB],
                            capture_output=True, text=True, env=env, timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    log = tmp_path / "serve.log"
    with serve_process(["--port", "0"], env, log) as (_process, url):
        warning = [line for line in log.read_text().splitlines() if "warning" in line]
        assert len(warning) == 1 and "kgsql.llm pull" in warning[0], log.read_text()
        status, databases = _get(f"{url}/api/databases")
        assert status == 200 and DB in [d["name"] for d in databases]  # type: ignore[union-attr]
        status, rows = _post(f"{url}/api/sql", {"db": DB, "sql": "SELECT count(*) FROM rivers"})
        assert status == 200 and rows["rows"][0][0] > 0  # type: ignore[index]
        status, answer = _post(f"{url}/api/ask", {"db": DB, "question": "Which river is the longest?"})
        text = json.dumps(answer)
        assert "kgsql.llm pull" in text and "Traceback" not in log.read_text()
