"""A lab set is written whole or not at all."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.errors import KgsqlError
from kgsql.lab.folders import new_folder


def test_a_failed_build_leaves_nothing_and_a_finished_one_appears_whole(tmp_path: Path) -> None:
    out = tmp_path / "set"
    with pytest.raises(RuntimeError), new_folder(out) as partial:
        (partial / "dev.json").write_text("[]", encoding="utf-8")
        raise RuntimeError("interrupted")
    assert not out.exists() and not (tmp_path / "set.partial").exists()
    with new_folder(out) as partial:
        assert not out.exists()
        (partial / "dev.json").write_text("[]", encoding="utf-8")
    assert (out / "dev.json").read_text(encoding="utf-8") == "[]" and not (tmp_path / "set.partial").exists()
    with pytest.raises(KgsqlError, match="exists"), new_folder(out):
        pass
