"""The spatial benchmark's traffic database, when ../shared/data is present (else skipped).

The always-running spatial checks use the shipped example database; this one
confirms the real dataset: every geometry column typed with its SRID (even
though traffic.sqlite's geometry_columns registry names tables that no longer
exist), and every table carrying its region description.
"""
from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "spatial"
TRAFFIC = DATA / "dataset1" / "traffic" / "traffic.sqlite"


@pytest.mark.skipif(not TRAFFIC.exists(), reason="spatial dataset not present (../shared/data/spatial)")
def test_traffic_geometry_and_regions(schema_graph, unique_name):
    db = unique_name("traffic")
    report = schema_graph.ingest(TRAFFIC, name=db)
    schema = schema_graph.schema(db)
    assert report.tables == 11 and report.spatial_columns == 11
    for table in schema.tables:
        geoms = [c for c in table.columns if c.spatial]
        assert len(geoms) == 1, table.name
        assert geoms[0].spatial.srid == 4326 and geoms[0].spatial.geometry_type in {
            "POINT", "LINESTRING", "MULTILINESTRING", "POLYGON", "MULTIPOLYGON"}
        assert "Nanjing" in table.geo_description, table.name
    assert schema.table("roads").column("Shape").spatial.geometry_type == "LINESTRING"
    assert "Nanjing" in schema.description  # the shipped profile, found by file name
