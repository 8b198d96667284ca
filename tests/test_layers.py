"""The layer rule of docs/architecture.md, checked on every import line of kgsql/ (lazy ones included)."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import kgsql

#: Lowest first; a package may import its own layer and the ones below, never one above.
LAYERS: list[set[str]] = [
    {"errors", "paths", "secrets", "cli_types", "registry"},
    {"schema", "db", "llm", "prompts", "text"},
    {"retrieve"},
    {"sql"},
    {"graph"},
    {"ingest", "mining", "profiles", "cypher"},
    {"schema_graph"},
    {"fewshot", "route"},
    {"correct"},
    {"generate"},
    {"stages", "agent"},
    {"methods"},
    {"conversation"},
    {"eval", "lab", "mcp", "serve"},
    {"ask", "sql_cli", "demo", "__main__", "__init__"},
]
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}
ROOT = Path(kgsql.__file__).parent


def part_of(module: str) -> str:
    """The top-level part of kgsql a module belongs to (``kgsql.db.guard`` -> ``db``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    """``kgsql/db/guard.py`` -> ``kgsql.db.guard``; a package's ``__init__.py`` is the package itself."""
    parts = ("kgsql", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def imports(path: Path, *, root: bool = False) -> list[str]:
    """The kgsql modules ``path`` imports anywhere in the file (inside functions too). ``from pkg import name``
    imports ``pkg`` and, when ``name`` is a module, ``pkg.name`` as well. ``root``: ``kgsql`` itself counts too
    (``from kgsql import __version__``; the layer rule leaves it out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            out += [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES]
    return [m for m in out if m.startswith("kgsql.") or (root and m == "kgsql")]


def test_every_part_of_kgsql_has_a_layer() -> None:
    parts = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert parts <= set(LAYER), f"parts without a layer: {sorted(parts - set(LAYER))}"


def test_no_import_reaches_up() -> None:
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        me = part_of(".".join(("kgsql", *path.relative_to(ROOT).with_suffix("").parts)))
        for module in imports(path):
            other = part_of(module)
            if other in LAYER and LAYER[other] > LAYER[me]:
                upward.append(f"{path.relative_to(ROOT)} imports {module}")
    assert upward == []


def test_no_import_cycle() -> None:
    graph = {name: {m for m in imports(path, root=True) if m in MODULES and m != name}
             for name, path in MODULES.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1][::-1]  # graphlib lists each module before the one that imports it
        raise AssertionError("import cycle: " + " imports ".join(cycle)) from None


#: (who, what they must not import) -- issue 31's seams: a user surface does not need the benchmark
#: package, and the foreign-key graph is schema knowledge, not retrieval.
FORBIDDEN: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ask", "serve", "mcp", "demo", "sql_cli", "methods", "stages", "agent", "conversation"), "eval"),
    (("correct", "stages", "agent", "schema_graph"), "retrieve.joins"),
    (("methods", "stages", "agent"), "ingest"),  # reading a schema is not ingesting: schema.sources
)


def test_user_surfaces_do_not_import_the_benchmark_package() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        me = part_of(module_name(path))
        for parts, banned in FORBIDDEN:
            if me in parts:
                found += [f"{path.relative_to(ROOT)} imports {m}" for m in imports(path)
                          if m == f"kgsql.{banned}" or m.startswith(f"kgsql.{banned}.")]
    assert found == []
