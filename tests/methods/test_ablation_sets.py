"""``eval run --ablation NAME`` runs registered methods only: each set is the method, DAIL-SQL and each part off."""
from __future__ import annotations

import argparse

from kgsql.eval.run import add_arguments
from kgsql.methods import ABLATION_SETS, KGSQL_ABLATIONS, SSPA_ABLATIONS, available_methods


def test_every_method_of_every_set_is_registered() -> None:
    known = set(available_methods())
    for name, methods in ABLATION_SETS.items():
        assert set(methods) <= known, (name, sorted(set(methods) - known))


def test_sets_hold_the_method_the_baseline_and_each_part_off() -> None:
    assert ABLATION_SETS["kgsql"] == ("dail-sql", "kgsql", *(f"kgsql-{p}" for p in KGSQL_ABLATIONS))
    assert ABLATION_SETS["sspa"] == ("dail-sql", "sspa", *(f"sspa-{p}" for p in SSPA_ABLATIONS))


def test_the_eval_flag_offers_the_registry_sets() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--dataset", "spider", "--data-dir", ".", "--ablation", "kgsql"])
    assert args.ablation == "kgsql"
    from kgsql.eval.run import _methods

    assert _methods(args) == list(ABLATION_SETS["kgsql"])
