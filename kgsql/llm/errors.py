"""Typed LLM errors: one class per failure a user can act on differently.

Every message is one line that names the problem and, where it can, the fix.
Messages never contain an API key (callers pass them through ``redact``).
"""
from __future__ import annotations

from kgsql.errors import LLMError


class LLMConfigError(LLMError):
    """The client is misconfigured (no model, no API key for a hosted endpoint...)."""


class LLMAuthError(LLMError):
    """The endpoint rejected the credentials (HTTP 401/403)."""


class LLMModelNotFoundError(LLMError):
    """The endpoint does not know the model, or the base URL path is wrong (HTTP 404)."""


class LLMBadRequestError(LLMError):
    """The endpoint refused the request itself (HTTP 400/422: prompt too long, bad parameter)."""


class LLMConnectionError(LLMError):
    """The endpoint cannot be reached (connection refused, DNS failure, reset)."""


class LLMTimeoutError(LLMError):
    """The endpoint did not answer within the per-call timeout, even after retries."""


class LLMRateLimitError(LLMError):
    """The endpoint kept answering HTTP 429 after all retries."""


class LLMServerError(LLMError):
    """The endpoint kept answering HTTP 5xx after all retries."""


class LLMBadResponseError(LLMError):
    """The endpoint answered, but the body is not a chat completion (malformed JSON, wrong shape)."""


class LLMEmptyResponseError(LLMError):
    """The endpoint answered a well-formed completion with no text in it."""


class ScriptExhaustedError(LLMError):
    """A ScriptedLM was asked for a step it has no scripted response for."""


class ModelNotPulledError(LLMError):
    """A local GGUF model is needed but has not been pulled yet."""


class ModelDownloadError(LLMError):
    """Fetching model parts (PyPI packages or the hub) failed."""


class ModelIntegrityError(LLMError):
    """A joined or downloaded model file has the wrong size or sha256."""


class LocalServerError(LLMError):
    """The in-process llama.cpp server could not start."""
