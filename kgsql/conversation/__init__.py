"""Conversations: follow-up questions ("only those older than 30") answered in the context of the earlier ones.

The methods take ``history`` (the earlier questions, oldest first) and rewrite a
follow-up to stand alone; a conversation is what remembers those questions
between calls. :mod:`.turns` is the conversation itself (the notebook's object),
:mod:`.store` keeps many by id in memory (the service, the MCP server) and
:mod:`.saved` keeps named ones on disk (``kgsql ask --conversation NAME``).
"""
from __future__ import annotations

from kgsql.conversation.turns import DEFAULT_MAX_TURNS, Conversation, Turn

__all__ = ["Conversation", "Turn", "DEFAULT_MAX_TURNS"]
