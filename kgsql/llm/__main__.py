"""Entry point for ``python -m kgsql.llm``."""
from kgsql.llm.cli import main

raise SystemExit(main())
