"""Many conversations kept in memory by id, for the servers (``kgsql serve``'s ``/api/ask``, the MCP ``ask``).

A client names its conversation (any id it chooses); turns with the same id
and database form one conversation. The same id on another database is another
conversation, so a client never mixes two schemas' questions. Only the
``max_conversations`` used last are kept (least recently used dropped first),
so clients that never come back cost a bounded amount of memory.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict

from kgsql.conversation.turns import DEFAULT_MAX_TURNS, Conversation
from kgsql.errors import InputError

MAX_CONVERSATIONS = 64  # conversations kept at once
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$")


def check_conversation_id(value: object) -> str:
    """A conversation id: 1-100 letters, digits, ``_ . : -`` (not starting with a sign); else one InputError."""
    if not isinstance(value, str) or not _ID.match(value):
        raise InputError("a conversation id is 1-100 letters, digits or _ . : - (starting with a letter or digit)")
    return value


class ConversationStore:
    """Conversations by (database, id), least recently used dropped beyond ``max_conversations``."""

    def __init__(self, max_conversations: int = MAX_CONVERSATIONS, max_turns: int = DEFAULT_MAX_TURNS) -> None:
        self.max_conversations = max_conversations
        self.max_turns = max_turns
        self._kept: OrderedDict[tuple[str, str], Conversation] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, db: str, conversation_id: str, *, reset: bool = False) -> Conversation:
        """The conversation ``conversation_id`` over ``db`` (new when unknown; emptied first with ``reset``)."""
        key = (db, check_conversation_id(conversation_id))
        with self._lock:
            conversation = self._kept.get(key)
            if conversation is None:
                conversation = self._kept[key] = Conversation(None, db, max_turns=self.max_turns)
            elif reset:
                conversation.reset()
            self._kept.move_to_end(key)
            while len(self._kept) > self.max_conversations:
                self._kept.popitem(last=False)
            return conversation

    def __len__(self) -> int:
        return len(self._kept)
