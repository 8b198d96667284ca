"""The schema knowledge graph: store (Bolt), embedded server, writer, queries."""
