"""What every method's option group shares: the values it refuses when the method is built.

The default's ``OneCallOptions``, the baselines' ``PromptOptions`` and the classic
pipeline's ``ClassicOptions`` take the same kinds of settings (counts, seconds, a
user-evidence mode); one check keeps a bad ``--set`` refused the same way by all.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

from kgsql.errors import InputError
from kgsql.stages.context import check_context
from kgsql.stages.evidence import USER_EVIDENCE_MODES

#: How a spatial database's function notes and derived examples are chosen: for each question (the nearest),
#: or once for the database (all its geometry makes likely: one cached prefix for its questions).
SPATIAL_CHOICES = ("question", "database")


def check_options(options: Any) -> None:
    """Refuse a user-evidence mode or conversation context that does not exist, a negative number, or a
    timeout that is not a positive number of seconds (one line each, naming the option)."""
    if options.user_evidence not in USER_EVIDENCE_MODES:
        raise InputError(f"user_evidence '{options.user_evidence}': expected one of {', '.join(USER_EVIDENCE_MODES)}")
    for f in fields(options):
        value = getattr(options, f.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            raise InputError(f"{f.name} must not be negative, not {value}")
    if getattr(options, "spatial_choice", "question") not in SPATIAL_CHOICES:
        raise InputError(f"spatial_choice '{options.spatial_choice}': expected one of {', '.join(SPATIAL_CHOICES)}")
    if hasattr(options, "context"):
        check_context(options.context)
    if not 0 < options.timeout_s < float("inf"):
        raise InputError("timeout_s must be a positive number of seconds")
