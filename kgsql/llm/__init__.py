"""The LLM layer: one seam (``LM.complete``) for every generation step.

Pipeline code should import from here only::

    from kgsql.llm import LM, Completion, default_lm, usage_scope
"""
from kgsql.llm.base import LM, Completion, Message, Messages, estimate_tokens
from kgsql.llm.cache import ResponseCache
from kgsql.llm.concurrency import complete_many
from kgsql.llm.errors import (
    LLMAuthError, LLMBadRequestError, LLMBadResponseError, LLMConfigError, LLMConnectionError,
    LLMEmptyResponseError, LLMModelNotFoundError, LLMRateLimitError, LLMServerError, LLMTimeoutError,
    LocalServerError, ModelDownloadError, ModelIntegrityError, ModelNotPulledError, ScriptExhaustedError,
)
from kgsql.llm.retry import RetryPolicy
from kgsql.llm.scripted import ScriptedCall, ScriptedLM
from kgsql.llm.usage import UsageMeter, UsageTotals, record_usage, usage_scope
from kgsql.errors import LLMError


def __getattr__(name: str):  # lazy: importing the seam must not import openai/xllamacpp
    if name == "OpenAIChatLM":
        from kgsql.llm.openai_lm import OpenAIChatLM

        return OpenAIChatLM
    if name == "LocalModelServer":
        from kgsql.llm.server import LocalModelServer

        return LocalModelServer
    if name in {"default_lm", "local_server", "stop_local_servers"}:
        from kgsql.llm import factory

        return getattr(factory, name)
    if name in {"MODELS", "ModelSpec", "get_model"}:
        from kgsql.llm import models

        return getattr(models, name)
    if name == "pull_model":  # not "pull": that name is the kgsql.llm.pull submodule
        from kgsql.llm.pull import pull

        return pull
    raise AttributeError(f"module 'kgsql.llm' has no attribute {name!r}")


__all__ = [
    "LM", "Completion", "Message", "Messages", "estimate_tokens", "ResponseCache", "complete_many",
    "RetryPolicy", "ScriptedLM", "ScriptedCall", "UsageMeter", "UsageTotals", "record_usage",
    "usage_scope", "OpenAIChatLM", "LocalModelServer", "default_lm", "local_server",
    "stop_local_servers", "MODELS", "ModelSpec", "get_model", "pull_model", "LLMError", "LLMAuthError",
    "LLMBadRequestError", "LLMBadResponseError", "LLMConfigError", "LLMConnectionError",
    "LLMEmptyResponseError", "LLMModelNotFoundError", "LLMRateLimitError", "LLMServerError",
    "LLMTimeoutError", "LocalServerError", "ModelDownloadError", "ModelIntegrityError",
    "ModelNotPulledError", "ScriptExhaustedError",
]
