"""kgsql: knowledge-graph-backed schema reasoning for LLM text-to-SQL."""
__version__ = "0.1.0"
