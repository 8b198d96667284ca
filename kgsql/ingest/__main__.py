import sys

from kgsql.ingest.cli import main

sys.exit(main())
