"""Learning from past (question, SQL) pairs: rule mining (``rules``), LLM mining (``llm``),
query logs and their halves (``history``), and storing what was learnt in the graph (``learn``).
See docs/knowledge.md."""
