"""Prompt templates (``$name`` placeholders), one file per step, shipped as package data.

Keeping prompts as text files makes them easy to read, diff and test against
golden files; ``kgsql.prompts.templates`` fills them.
"""
