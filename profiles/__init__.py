"""Declarative ingestion profiles and per-database knowledge, shipped as kgsql.profiles."""
