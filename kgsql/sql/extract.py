"""Pull one SQL query out of whatever the model wrote.

Models wrap SQL in ```sql fences, lead with prose ("Here is the query:"),
explain afterwards, end chain-of-thought with "So the final answer is: ..."
(ACT-SQL), answer as JSON, leave chat-template tokens (``<|im_end|>``) or
reasoning blocks (``<think>``) behind, and with SSpa/DAIL's question format
("Answer the following with no explanation: ... SELECT") continue the prompt's
``SELECT`` with only the column list. :func:`extract_sql` undoes all of that
and returns the first query (the last ```sql block when the prompt asked for
steps), without a trailing semicolon; when there is no
query at all it raises :class:`NoSQLFoundError`.

Search order: text after the last "final answer" marker, then ```sql fences,
then other fences, then text after the last "SQL:" label, then the whole
output. Within a region the query starts at the first SELECT/WITH that reads
as SQL (uppercase or at a line start preferred, sqlglot must parse it) and
ends at the first ``;``, a blank line, a prose line or a closing fence.
"""
from __future__ import annotations

import json
import re
from typing import Iterator

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kgsql.db.engine import ENGINES
from kgsql.db.guard import split_statements
from kgsql.errors import LLMError

__all__ = ["NoSQLFoundError", "extract_sql"]


class NoSQLFoundError(LLMError):
    """The model output holds no SQL query (empty, a refusal, prose only...)."""

    def __init__(self, problem: str, text: str) -> None:
        self.problem = problem
        self.excerpt = _excerpt(text)
        super().__init__(f"no SQL query in the model output: {problem} (output: {self.excerpt!r})")


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# ---------------------------------------------------------------------------- cleanup

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_UNCLOSED_THINK = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_CLOSE_THINK = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.S | re.I)  # opened in the prompt
_TEMPLATE_TOKENS = re.compile(
    r"<\|[A-Za-z0-9_:.\- ]{1,40}\|>"  # <|im_end|> <|eot_id|> <|start_header_id|> ...
    r"|</?s>|\[/?INST\]|<<\/?SYS>>|<(?:start|end)_of_turn>|<eos>|<bos>|<\uff5c[^>]{1,40}\uff5c>",
)
_ROLE_LINE = re.compile(r"^\s*(?:assistant|model|ASSISTANT|Assistant|AI|Response|### Response)\s*:?\s*$")


def _clean(text: str) -> str:
    """Drop reasoning blocks, chat-template tokens and bare role lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _THINK.sub("\n", text)
    if "</think>" in text.lower() or "</thinking>" in text.lower() or "</reasoning>" in text.lower():
        text = _CLOSE_THINK.sub("\n", text)
    text = _UNCLOSED_THINK.sub("\n", text)
    text = _TEMPLATE_TOKENS.sub("\n", text)
    lines = [ln for ln in text.split("\n") if not _ROLE_LINE.match(ln)]
    return "\n".join(lines).strip()


# ---------------------------------------------------------------------------- regions

_FENCE = re.compile(r"```(.*?)(?:```|\Z)", re.S)
_LANG = re.compile(r"[A-Za-z0-9_+\-]*")
#: Fence languages of SQL whatever the engine; each engine class adds its own (``Engine.fence_names``).
_SQL_LANGS = frozenset({"sql", "mysql", "tsql", "plsql", "sparksql"})
_FINAL_MARKER = re.compile(
    r"(?:so\s+)?(?:the\s+)?final\s+(?:answer|sql|query|sql\s+query)(?:\s+is)?\s*[:：]|"
    r"(?:so\s+)?the\s+final\s+answer\s+is\b|"
    # a heading or bold line of its own: "### Final SQL Query", "**Final query**"
    r"(?:^|\n)[ \t#*>_]*(?:the\s+)?final\s+(?:answer|sql|query|sql\s+query)[ \t*_]*(?=\n)",
    re.I,
)
_SQL_LABEL = re.compile(r"(?:^|\n)[ \t>*#_]*(?:SQL(?:ite)?(?:\s+query)?|Query|Answer)[ \t*_]*[:：]", re.I)


def _fences(text: str) -> list[tuple[str, str]]:
    """(language, content) of each ``` block; an unclosed last block runs to the end."""
    out = []
    for m in _FENCE.finditer(text):
        body = m.group(1)
        first, newline, rest = body.partition("\n")
        tag = first.strip()
        if newline and _LANG.fullmatch(tag) and tag.lower() not in ("select", "with"):
            out.append((tag.lower(), rest))
        else:  # ```SELECT ...``` on one line, or a fence without a language line
            out.append(("", body))
    return out


def _regions(text: str, last: bool) -> Iterator[str]:
    """Places to look for the query, most specific first; SQL fences last-first when ``last``."""
    finals = list(_FINAL_MARKER.finditer(text))
    if finals:
        yield text[finals[-1].end():]
    fences = _fences(text)
    sql_langs = _SQL_LANGS.union(*(e.fence_names for e in ENGINES.values()))
    sql_fences = [body for lang, body in fences if lang in sql_langs]
    yield from (reversed(sql_fences) if last else sql_fences)
    yield from (body for lang, body in fences if lang not in sql_langs)
    labels = list(_SQL_LABEL.finditer(text))
    if labels:
        yield text[labels[-1].end():]
    yield text


# ---------------------------------------------------------------------------- JSON answers


def _from_json(text: str) -> str | None:
    """The query of a JSON answer such as {"sql": "SELECT ..."}."""
    body = text.strip()
    fences = _fences(body) if body.startswith("```") else []
    if len(fences) == 1 and fences[0][0] in ("json", ""):
        body = fences[0][1].strip()
    if not (body.startswith("{") and body.endswith("}")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict):
        for key in ("sql", "SQL", "query", "sql_query", "answer", "final_answer"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return None


# ---------------------------------------------------------------------------- locating the query

_SELECT = re.compile(r"\bselect\b", re.I)
_WITH = re.compile(
    r"\bwith\s+(?:recursive\s+)?(?:\"[^\"]+\"|`[^`]+`|\[[^\]]+\]|\w+)\s*"  # WITH [RECURSIVE] name
    r"(?:\([^)]*\)\s*)?as\s*(?:not\s+)?(?:materialized\s+)?\(",  # [(columns)] AS [NOT MATERIALIZED] (
    re.I,
)
_STARTS_QUERY = re.compile(r"^\s*(?:select|with)\b", re.I)
#: How a line may start that continues a query after a blank line.
_CONTINUATION = re.compile(
    r"^\s*(?:(?:from|where|join|inner|left|cross|natural|group\s+by|order\s+by|having|limit|union|intersect|"
    r"except|select)\b|\)|,)",
    re.I,
)
#: "From the result ...": a sentence that happens to start with a keyword.
_KEYWORD_SENTENCE = re.compile(
    r"^\s*[A-Z][a-z]+\s+(?:the|this|that|these|those|a|an|we|it|its|there|here|our|which|you)\b"
)
_SQL_WORDS = frozenset(
    """select from where join inner left right full outer cross natural on using and or not group order by
    having limit offset union all intersect except as case when then else end in between like glob is null
    exists distinct with recursive asc desc collate cast count sum avg min max over partition window
    true false""".split()
)
_MARKDOWN_LINE = re.compile(r"^\s*(?:#{1,6}\s|\*\*|>\s|[*•]\s(?!from\b)|-\s(?!-)|\d+[.)]\s+[A-Za-z])", re.I)
_PROSE_LINE = re.compile(r"^\s*([A-Z][a-z']+)[,:]?\s+([a-z][a-z']*)\b")


def _is_prose_line(line: str) -> bool:
    """A line of explanation rather than SQL (markdown, or a sentence starting with a capitalised word)."""
    if _MARKDOWN_LINE.match(line):
        return True
    m = _PROSE_LINE.match(line)
    if m and m.group(1).lower() not in _SQL_WORDS and m.group(2).lower() not in _SQL_WORDS:
        return True
    stripped = line.strip()
    return stripped.endswith(":") and not stripped.lower().startswith(tuple(_SQL_WORDS))


def _parses(sql: str) -> exp.Expression | None:
    try:
        trees = sqlglot.parse(sql, read="sqlite")
    except (SqlglotError, RecursionError, ValueError):
        return None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        return None
    return trees[0]


def _cut_end(sql: str) -> str:
    """The query from its first character to where SQL stops (``;``, blank line, prose, fence)."""
    lines = sql.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i > 0:
            if line.strip().startswith("```"):
                break
            if not line.strip():
                nxt = next((ln for ln in lines[i + 1:] if ln.strip()), "")
                if not _CONTINUATION.match(nxt) or _is_prose_line(nxt) or _KEYWORD_SENTENCE.match(nxt):
                    break
            if _is_prose_line(line):
                break
        kept.append(line)
        i += 1
    text = "\n".join(kept)
    fence = text.find("```")
    if fence >= 0:
        text = text[:fence]
    statements = split_statements(text)
    text = statements[0] if statements else text
    text = _trim_sentence(text.strip().rstrip(";").strip())
    if text.endswith(".") and _parses(text[:-1]) is not None:  # "... FROM rivers." ending a sentence
        text = text[:-1].rstrip()
    return text


_SENTENCE_BREAK = re.compile(r"(?:\.|\s)\s*(?=(?:This|The|It|Here|Note|That|These|Which|We|I|Explanation)\b\s+[a-z])")


def _trim_sentence(sql: str) -> str:
    """Cut prose that follows the query on the same line, when the rest does not parse."""
    if _parses(sql) is not None:
        return sql
    for m in _SENTENCE_BREAK.finditer(sql):
        head = sql[: m.start()].rstrip().rstrip(".;").rstrip()
        if _parses(head) is not None:
            return head
    return sql


def _starts(region: str) -> list[tuple[int, bool]]:
    """Candidate query starts: (offset, strong) in text order; strong = uppercase or at a line start/label."""
    found: list[tuple[int, bool]] = []
    for m in _SELECT.finditer(region):
        before = region[: m.start()].rstrip(" \t")
        strong = m.group(0) == "SELECT" or not before or before[-1] in "\n:`(\"'*>"
        found.append((m.start(), strong))
    for m in _WITH.finditer(region):
        before = region[: m.start()].rstrip(" \t")
        found.append((m.start(), m.group(0)[:4] == "WITH" or not before or before[-1] in "\n:`"))
    return sorted(found)


def _inline_end(region: str, start: int, sql: str) -> str:
    """For `SELECT ...` inside inline backticks, stop at the closing backtick."""
    if start > 0 and region[start - 1] == "`" and not region[:start].endswith("```"):
        close = sql.find("`")
        if close > 0:
            return sql[:close].strip().rstrip(";").strip()
    return sql


def _continuation(region: str) -> str | None:
    """``SELECT`` + the region when the model continued a prompt ending in SELECT."""
    body = region.strip()
    if not body or _STARTS_QUERY.match(body) or _is_prose_line(body.split("\n", 1)[0]):
        return None
    candidate = _cut_end("SELECT " + body)
    tree = _parses(candidate)
    if not isinstance(tree, exp.Select):
        return None
    plain_names = all(isinstance(e, (exp.Column, exp.Alias)) and not isinstance(getattr(e, "this", None), exp.Func)
                      for e in tree.expressions)
    if tree.args.get("from_", tree.args.get("from")) is None and plain_names:
        return None  # "SELECT Unknown": a word, not a query
    return candidate


def _find(region: str, continuation: bool) -> str | None:
    if continuation:
        sql = _continuation(region)
        if sql:
            return sql
    starts = _starts(region)
    weak_fallback: str | None = None
    for strong in (True, False):
        for offset, is_strong in starts:
            if is_strong != strong:
                continue
            sql = _inline_end(region, offset, _cut_end(region[offset:]))
            if _parses(sql) is not None:
                return sql
            if strong and weak_fallback is None and len(sql.split()) > 1:
                weak_fallback = sql
    return weak_fallback


def _ends_with_select(prompt_suffix: str) -> bool:
    return bool(re.search(r"\bselect\s*$", prompt_suffix, re.I))


def extract_sql(text: str, *, prompt_suffix: str = "", last: bool = False) -> str:
    """The first SQL query in model output ``text``, without a trailing ``;``.

    ``last``: the prompt asked to work in steps (least-to-most, chain of
    thought), so the answer is the last ```sql block, the earlier ones being
    intermediate steps; without it a first block followed by "or, equivalently"
    alternatives wins.

    ``prompt_suffix``: the end of the prompt; when it ends with ``SELECT`` and
    the output continues it (``name FROM cities``), ``SELECT `` is put back.
    An uppercase SELECT that sqlglot cannot parse is still returned (SQLite's
    error then drives self-correction); no SELECT/WITH at all raises
    :class:`NoSQLFoundError`.
    """
    if not isinstance(text, str):
        raise NoSQLFoundError(f"expected text, got {type(text).__name__}", repr(text))
    cleaned = _clean(text)
    if not cleaned:
        problem = "the output is empty" if not text.strip() else "the output holds only template tokens or reasoning"
        raise NoSQLFoundError(problem, text)
    continuation = _ends_with_select(prompt_suffix)
    from_json = _from_json(cleaned)
    if from_json is not None:
        cleaned = from_json.strip()
    seen: set[str] = set()
    for region in _regions(cleaned, last):
        if not region.strip() or region in seen:
            continue
        seen.add(region)
        sql = _find(region, continuation)
        if sql:
            return sql
    raise NoSQLFoundError("no SELECT or WITH query found", text)
