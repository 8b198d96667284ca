"""Methods composed from stages: each stage one idea with its own options.

``StagedMethod.one_call`` is kgsql's default method (``kgsql.methods``:
``kgsql``): retrieval -> spatial notes -> schema text -> evidence ->
examples -> graph hints -> one SQL call with an execution-checked correction
loop. The baselines (``baselines.py``: DAIL-SQL, ACT-SQL, SSpa) and the first
kgsql pipeline (``classic.py``) are stage lists over the same loop. See
docs/methods.md.
"""
from kgsql.stages.method import OneCallOptions, StagedMethod, one_call_stages
from kgsql.stages.state import QuestionState, Stage

__all__ = ["OneCallOptions", "QuestionState", "Stage", "StagedMethod", "one_call_stages"]
