"""The lab: benchmarks and calibration, kept apart from the library they measure.

Nothing in the runtime packages (``retrieve``, ``llm``, ``sql``, ``examples``,
``eval``'s protocols) imports from here; the lab imports them. Each module is
a command of its own:

* ``python -m kgsql.eval linking`` (:mod:`kgsql.lab.linking`): schema-linking
  benchmark of retrieval methods;
* ``python -m kgsql.lab.calibrate``: fit the retriever's models and thresholds
  into a calibration file (written only where ``--out`` says);
* ``python -m kgsql.lab.bench_wide``: retrieval latency on synthetic wide databases;
* ``python -m kgsql.lab.llm_bench``: local-model speed and server settings.

:mod:`kgsql.lab.stats` holds what linking and calibration share (per-method
statistics, token counts, evidence collection and re-selection).
"""
