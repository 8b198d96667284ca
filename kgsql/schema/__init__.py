"""Schema knowledge model shared by ingest, graph, retrieval and generation."""
from kgsql.schema.model import (
    Column,
    ColumnStats,
    DatabaseSchema,
    DerivedExpression,
    ForeignKey,
    SpatialInfo,
    Table,
)

__all__ = ["Column", "ColumnStats", "DatabaseSchema", "DerivedExpression", "ForeignKey", "SpatialInfo", "Table"]
