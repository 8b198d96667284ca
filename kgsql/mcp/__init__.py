"""kgsql's graph tools for any MCP client (``python -m kgsql.mcp``); see :mod:`kgsql.mcp.server`."""
