"""Cypher statements run by kgsql.graph, shipped as package data (kgsql.cypher)."""
