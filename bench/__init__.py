"""smartctx's benchmarks, one sub-package per thing measured (quality, latency, indexing,
reliability) over the shared pieces at this level; ``bench/README.md`` lists every script.

A script runs as a module of this package from the root of the checkout whose ``bench/`` it is, with
the code it measures first on the path (``PYTHONPATH=<frozen worktree>/server python -m
bench.quality.swebench ...``): the scripts import each other and the shared pieces as ``bench.*``.
"""
