"""Draw one database's schema subgraph so a person can look at it.

Tables are boxes listing their columns (key columns marked, spatial columns
tagged with geometry type), foreign keys are arrows from the referencing
column to the referenced one. The layout is a plain grid so the picture is
stable from run to run. Output: ``.svg``; ``.html`` (the SVG plus hover
tooltips with descriptions and statistics, self-contained, no network); or
``.png`` (rendered with matplotlib).
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import Path

from kgsql.errors import InputError
from kgsql.schema.model import Column, DatabaseSchema, Table

ROW_H = 18
HEADER_H = 24
BOX_W = 230
GAP_X = 90
GAP_Y = 40
MARGIN = 20


@dataclass(frozen=True)
class Box:
    table: Table
    x: float
    y: float

    @property
    def height(self) -> float:
        return HEADER_H + ROW_H * len(self.table.columns) + 6

    def row_y(self, column: str) -> float:
        for i, col in enumerate(self.table.columns):
            if col.name == column:
                return self.y + HEADER_H + ROW_H * i + ROW_H / 2 + 2
        return self.y + HEADER_H / 2


def layout(schema: DatabaseSchema) -> list[Box]:
    """Grid layout, roughly square, columns filled top to bottom."""
    n = max(1, len(schema.tables))
    per_col = max(1, math.ceil(math.sqrt(n)))
    boxes: list[Box] = []
    col_heights: list[float] = []
    for i, table in enumerate(schema.tables):
        c = i // per_col
        while len(col_heights) <= c:
            col_heights.append(MARGIN + 30)
        box = Box(table, MARGIN + c * (BOX_W + GAP_X), col_heights[c])
        col_heights[c] += box.height + GAP_Y
        boxes.append(box)
    return boxes


def _column_label(col: Column) -> str:
    tags = []
    if col.is_primary_key:
        tags.append("PK")
    if col.spatial:
        tags.append(col.spatial.geometry_type + (f" {col.spatial.srid}" if col.spatial.srid else ""))
    suffix = f"  [{', '.join(tags)}]" if tags else ""
    return f"{col.name}: {col.type or '?'}{suffix}"


def _tooltip(col: Column) -> str:
    parts = [f"{col.name} ({col.type or 'untyped'})"]
    if col.description:
        parts.append(col.description)
    if col.value_explanation:
        parts.append(col.value_explanation)
    if col.value_examples:
        parts.append("examples: " + ", ".join(col.value_examples[:5]))
    if col.stats.distinct_count is not None:
        parts.append(f"distinct: {col.stats.distinct_count}")
    return "\n".join(parts)


def to_svg(schema: DatabaseSchema) -> str:
    boxes = layout(schema)
    by_name = {b.table.name: b for b in boxes}
    width = max((b.x + BOX_W for b in boxes), default=BOX_W) + MARGIN
    height = max((b.y + b.height for b in boxes), default=100) + MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'font-family="monospace" font-size="12">',
        '<defs><marker id="arrow" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
        '<path d="M0,0 L10,4 L0,8 z" fill="#c0392b"/></marker></defs>',
        f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="16" font-weight="bold">'
        f"{html.escape(schema.name)} ({len(schema.tables)} tables, {len(schema.foreign_keys)} foreign keys)</text>",
    ]
    for box in boxes:
        t = box.table
        title = html.escape(t.description or t.geo_description or t.name)
        out.append(
            f'<g><title>{title}</title><rect x="{box.x}" y="{box.y}" width="{BOX_W}" height="{box.height}" '
            f'rx="4" fill="#fdfefe" stroke="#2c3e50"/>'
            f'<rect x="{box.x}" y="{box.y}" width="{BOX_W}" height="{HEADER_H}" rx="4" fill="#2c3e50"/>'
            f'<text x="{box.x + 8}" y="{box.y + 16}" fill="white" font-weight="bold">'
            f"{html.escape(t.name)}{'' if t.row_count is None else f'  ({t.row_count} rows)'}</text></g>"
        )
        for i, col in enumerate(t.columns):
            y = box.y + HEADER_H + ROW_H * i + 14
            weight = "bold" if col.is_primary_key else "normal"
            color = "#16a085" if col.spatial else "#2c3e50"
            out.append(
                f'<text x="{box.x + 8}" y="{y}" font-weight="{weight}" fill="{color}">'
                f"<title>{html.escape(_tooltip(col))}</title>{html.escape(_column_label(col))}</text>"
            )
    for fk in schema.foreign_keys:
        a, b = by_name.get(fk.table), by_name.get(fk.ref_table)
        if a is None or b is None:
            continue
        y1, y2 = a.row_y(fk.column), b.row_y(fk.ref_column)
        if a is b:
            x1 = x2 = a.x + BOX_W
            path = f"M{x1},{y1} C{x1 + 40},{y1} {x2 + 40},{y2} {x2 + 2},{y2}"
        else:
            right = b.x > a.x
            x1 = a.x + (BOX_W if right or b.x == a.x else 0)
            x2 = b.x + (0 if right else BOX_W) + (0 if b.x != a.x else BOX_W)
            bend = 50 if right or b.x == a.x else -50
            path = f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend if b.x != a.x else x2 + 50},{y2} {x2},{y2}"
        label = html.escape(f"{fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}")
        out.append(
            f'<path d="{path}" fill="none" stroke="#c0392b" stroke-width="1.3" marker-end="url(#arrow)">'
            f"<title>{label}</title></path>"
        )
    out.append("</svg>")
    return "\n".join(out)


def to_html(schema: DatabaseSchema) -> str:
    rows = []
    for t in schema.tables:
        desc = t.description or t.geo_description
        rows.append(
            f"<tr><td><b>{html.escape(t.name)}</b></td><td>{len(t.columns)}</td>"
            f"<td>{'' if t.row_count is None else t.row_count}</td><td>{html.escape(desc)}</td></tr>"
        )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>kgsql schema graph: {html.escape(schema.name)}</title>"
        "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px}</style></head><body>"
        f"<h1>{html.escape(schema.name)}</h1><p>Hover a column for its description, examples and statistics; "
        "hover an arrow for its foreign key.</p>"
        f"{to_svg(schema)}<h2>Tables</h2><table><tr><th>table</th><th>columns</th><th>rows</th>"
        f"<th>description</th></tr>{''.join(rows)}</table></body></html>"
    )


def to_png(schema: DatabaseSchema, path: Path) -> None:
    """Render the same layout with matplotlib (no SVG renderer needed)."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("a .png picture needs matplotlib: pip install 'kgsql[viz]' (or export .html / .svg)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    boxes = layout(schema)
    width = max((b.x + BOX_W for b in boxes), default=BOX_W) + MARGIN
    height = max((b.y + b.height for b in boxes), default=100) + MARGIN
    fig, ax = plt.subplots(figsize=(width / 80, height / 80), dpi=100)
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    ax.text(MARGIN, MARGIN + 8, schema.name, fontsize=12, fontweight="bold")
    by_name = {b.table.name: b for b in boxes}
    for box in boxes:
        ax.add_patch(Rectangle((box.x, box.y), BOX_W, box.height, fill=False, edgecolor="#2c3e50"))
        ax.add_patch(Rectangle((box.x, box.y), BOX_W, HEADER_H, color="#2c3e50"))
        ax.text(box.x + 6, box.y + 16, box.table.name, color="white", fontsize=8, fontweight="bold")
        for i, col in enumerate(box.table.columns):
            ax.text(
                box.x + 6, box.y + HEADER_H + ROW_H * i + 13, _column_label(col), fontsize=7,
                fontweight="bold" if col.is_primary_key else "normal",
                color="#16a085" if col.spatial else "#2c3e50", family="monospace",
            )
    for fk in schema.foreign_keys:
        a, b = by_name.get(fk.table), by_name.get(fk.ref_table)
        if a is None or b is None:
            continue
        right = b.x >= a.x
        start = (a.x + (BOX_W if right else 0), a.row_y(fk.column))
        end = (b.x + (0 if b.x > a.x else BOX_W), b.row_y(fk.ref_column))
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="->", color="#c0392b",
                                     connectionstyle="arc3,rad=0.2", mutation_scale=10))
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


def export_schema(schema: DatabaseSchema, path: Path) -> Path:
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".svg":
        path.write_text(to_svg(schema), encoding="utf-8")
    elif suffix in (".html", ".htm"):
        path.write_text(to_html(schema), encoding="utf-8")
    elif suffix == ".png":
        to_png(schema, path)
    else:
        raise InputError(f"cannot export to '{path.name}': use .html, .svg or .png")
    return path
