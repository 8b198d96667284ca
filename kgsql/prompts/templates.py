"""Fill the prompt templates in ``kgsql/prompts/``.

``$name`` placeholders (``string.Template``) so SQL, JSON and braces in the
filled values never clash with template syntax. A missing value is an error,
not a silently empty slot.
"""
from __future__ import annotations

import functools
import importlib.resources
from string import Template

from kgsql.errors import KgsqlError


@functools.cache
def template(name: str) -> Template:
    resource = importlib.resources.files("kgsql.prompts") / f"{name}.txt"
    try:
        return Template(resource.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise KgsqlError(f"no prompt template named '{name}'") from exc


def fill(name: str, **values: str) -> str:
    """The template ``name`` with every placeholder filled (trailing newline trimmed)."""
    try:
        return template(name).substitute(**values).rstrip("\n")
    except KeyError as exc:
        raise KgsqlError(f"prompt template '{name}' needs a value for {exc}") from exc


def section(name: str, **values: str) -> str:
    """A prompt section, or "" when every value is empty (the section is left out)."""
    if not any(v.strip() for v in values.values()):
        return ""
    return fill(name, **values)


def join_sections(*parts: str) -> str:
    """Sections separated by one blank line, empty ones dropped."""
    return "\n\n".join(p.strip("\n") for p in parts if p and p.strip())


def bullet_list(lines: list[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def parse_bullets(text: str, *, limit: int = 12) -> list[str]:
    """Lines of a "- item" list from model output, tolerant of numbering and stray prose."""
    import re

    items = []
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^(?:[-*•]|\d+[.)])\s+(.*)$", line)
        if m and m.group(1).strip():
            items.append(m.group(1).strip())
    if not items:  # a model that ignored the format: take its non-empty lines
        items = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return items[:limit]
