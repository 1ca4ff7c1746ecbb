#!/usr/bin/env python3
"""Compares the --quick runs' learn.json here, all fields but timings and paths
(the comparison of ../2026-12-05-batchinv/compare.py): q-new1 and q-new2
(3f5a100, two partial sums per block) against each other and against
../2026-12-05-batchinv/q-new4 (a14d918, four partial sums)."""
import importlib.util, os

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("batchinv", os.path.join(here, "..", "2026-12-05-batchinv", "compare.py"))
batchinv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(batchinv)
batchinv.here = here
batchinv.report((("q-new1", "q-new2"), ("q-new1", "../2026-12-05-batchinv/q-new4")))
