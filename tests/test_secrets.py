"""Secrets redaction (kgsql.secrets): known values and credential-looking patterns."""
from __future__ import annotations

import pytest

from kgsql.secrets import MASK, SECRET_ENV_VARS, known_secrets, redact, redact_uri


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRET_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("var", SECRET_ENV_VARS)
def test_env_secret_values_are_masked(monkeypatch: pytest.MonkeyPatch, var: str) -> None:
    monkeypatch.setenv(var, "Tr0ub4dor&3")
    text = "connect failed with credential Tr0ub4dor&3 (retry Tr0ub4dor&3)"
    assert redact(text) == f"connect failed with credential {MASK} (retry {MASK})"


def test_passed_in_secrets_and_longest_first() -> None:
    assert redact("token abcdef and abcdefXYZ", secrets=["abcdef", "abcdefXYZ"]) == f"token {MASK} and {MASK}"
    assert redact("nothing here", secrets=[None, ""]) == "nothing here"


def test_short_values_are_not_replaced_verbatim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "abc")
    assert redact("abc is too short to mask") == "abc is too short to mask"
    assert known_secrets() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-AbC123_def-456ghi used", f"key {MASK} used"),
        ("OPENAI said: invalid key sk-abcdefgh12345678", f"OPENAI said: invalid key {MASK}"),
        ("bolt://neo4j:hunter2@localhost:7687", f"bolt://neo4j:{MASK}@localhost:7687"),
        ("uri neo4j+s://admin:p%40ss!@db.example.com end", f"uri neo4j+s://admin:{MASK}@db.example.com end"),
        ("password=hunter2", f"password={MASK}"),
        ("KGSQL_GRAPH_PASSWORD=hunter2 next", f"KGSQL_GRAPH_PASSWORD={MASK} next"),
        ("neo4j.password: hunter2", f"neo4j.password: {MASK}"),
        ('{"api_key": "abc def"}', f'{{"api_key": "{MASK}"}}'),
        ("?user=a&password=x1&db=b", f"?user=a&password={MASK}&db=b"),
        ("Authorization: Bearer eyJhbGciOi.x-y_z", f"Authorization: Bearer {MASK}"),
        ("auth_name=EPSG srid=4326", "auth_name=EPSG srid=4326"),
        ("bolt://localhost:7687", "bolt://localhost:7687"),
        ("no secrets in this sentence", "no secrets in this sentence"),
    ],
)
def test_patterns(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redact_is_idempotent() -> None:
    once = redact("bolt://u:pw@h password=x sk-abcdefghijklmnop")
    assert redact(once) == once


def test_empty_text() -> None:
    assert redact("") == ""


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("bolt://neo4j:hunter2@localhost:7687", f"bolt://neo4j:{MASK}@localhost:7687"),
        ("neo4j://user:pa:ss@host/db", f"neo4j://user:{MASK}@host/db"),
        ("bolt://localhost:7687", "bolt://localhost:7687"),
        ("bolt://user@host:7687", "bolt://user@host:7687"),
        ("http://h/v1?api_key=zzz&model=m", f"http://h/v1?api_key={MASK}&model=m"),
        ("http://h/v1?model=a b", "http://h/v1?model=a b"),
        ("http://[::1", "http://[::1"),
    ],
)
def test_redact_uri(uri: str, expected: str) -> None:
    assert redact_uri(uri) == expected


def test_redact_uri_masks_env_secret_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_GRAPH_PASSWORD", "hunter22")
    assert "hunter22" not in redact_uri("bolt://localhost:7687/hunter22")


# --------------------------------------------------------------------------- credentials in URLs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GET https://generativelanguage.googleapis.com/v1/models?key=AIzaSyA-1x_2 failed",
         f"GET https://generativelanguage.googleapis.com/v1/models?key={MASK} failed"),
        ("http://h:8080/v1?model=m&api_key=abc123", f"http://h:8080/v1?model=m&api_key={MASK}"),
        ("url=https://h/x?token=t0k3n&page=2", f"url=https://h/x?token={MASK}&page=2"),
        ("https://h/cb#access_token=ya29.a0AfH&expires_in=3600",
         f"https://h/cb#access_token={MASK}&expires_in=3600"),
        ("https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sig=AbC%2Bd%3D&se=2030-01-01",
         f"https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sig={MASK}&se=2030-01-01"),
        ("https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIAX%2F2024&X-Amz-Signature=deadbeef01",
         f"https://b.s3.amazonaws.com/o?X-Amz-Credential={MASK}&X-Amz-Signature={MASK}"),
        ('endpoint "https://h/v1?KEY=Secret-1" refused', f'endpoint "https://h/v1?KEY={MASK}" refused'),
        ("https://u:p@ss@host:7687/db", f"https://u:{MASK}@host:7687/db"),
        ("bolt://me@corp.com:hunter2@graph.local", f"bolt://me@corp.com:{MASK}@graph.local"),
        # not credentials: other parameters, look-alike names, '@' outside the authority
        ("https://h/search?keyword=x&monkey=1&q=a", "https://h/search?keyword=x&monkey=1&q=a"),
        ("https://registry.npmjs.org:443/@scope/pkg", "https://registry.npmjs.org:443/@scope/pkg"),
        ("http://localhost:8080/v1?x=a@b.c", "http://localhost:8080/v1?x=a@b.c"),
        ("the primary key=id of t", "the primary key=id of t"),
    ],
)
def test_url_credentials_are_masked(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("https://h/v1?key=abc&alt=json", f"https://h/v1?key={MASK}&alt=json"),
        ("https://h/v1?q=a%20b&sig=x%2By", f"https://h/v1?q=a%20b&sig={MASK}"),  # rest kept as written
        ("https://h/cb#token=abc", f"https://h/cb#token={MASK}"),
        ("neo4j://user:p@ss@host/db", f"neo4j://user:{MASK}@host/db"),
    ],
)
def test_redact_uri_query_fragment_and_userinfo(uri: str, expected: str) -> None:
    assert redact_uri(uri) == expected


# --------------------------------------------------------------------------- --graph-password(-file)


def _parser():  # type: ignore[no-untyped-def]
    import argparse

    from kgsql.secrets import add_graph_password_arguments

    p = argparse.ArgumentParser(prog="kgsql.tool")
    add_graph_password_arguments(p)
    return p


def test_password_file_is_read_when_private(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "pw"
    secret.write_text("s3cr3t-pass\nignored second line\n")
    secret.chmod(0o600)
    args = _parser().parse_args(["--graph-password-file", str(secret)])
    assert args.graph_password == "s3cr3t-pass"
    assert capsys.readouterr().err == ""
    assert _parser().parse_args([]).graph_password is None  # KGSQL_GRAPH_PASSWORD applies then


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_password_file_open_to_others_is_refused_in_one_line(tmp_path, capsys, mode: int) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "pw"
    secret.write_text("s3cr3t-pass\n")
    secret.chmod(mode)
    with pytest.raises(SystemExit) as stop:
        _parser().parse_args(["--graph-password-file", str(secret)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "s3cr3t" not in err
    assert err.startswith("kgsql.tool: error: password file ") and "chmod 600" in err


@pytest.mark.parametrize("content", [None, ""])
def test_password_file_missing_or_empty(tmp_path, capsys, content: str | None) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "pw"
    if content is not None:
        secret.write_text(content)
        secret.chmod(0o600)
    with pytest.raises(SystemExit):
        _parser().parse_args(["--graph-password-file", str(secret)])
    assert capsys.readouterr().err.count("\n") == 1


def test_password_on_the_command_line_still_works_but_warns(capsys) -> None:  # type: ignore[no-untyped-def]
    args = _parser().parse_args(["--graph-password", "pw-123456"])
    assert args.graph_password == "pw-123456"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "process list" in err and "pw-123456" not in err
    assert "KGSQL_GRAPH_PASSWORD" in err and "--graph-password-file" in err


def test_help_says_the_password_is_visible() -> None:
    text = " ".join(_parser().format_help().split())
    assert "visible to other users in the process list" in text
    assert "--graph-password-file PATH" in text
    with pytest.raises(SystemExit):
        _parser().parse_args(["--graph-password", "a", "--graph-password-file", "b"])
