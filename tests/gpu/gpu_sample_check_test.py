"""scripts/gpu_sample_check.py's measures on small recordings made with the trace schema: the cuDNN
autotuner's search counts for legacy cudnnFind calls and for torch 2.x's backend plans alike."""

import importlib.util
import os
import sqlite3
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
spec = importlib.util.spec_from_file_location("gpu_sample_check", os.path.join(ROOT, "scripts", "gpu_sample_check.py"))
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

SCHEMA = open(os.path.join(ROOT, "common", "schema", "schema.sql")).read()


def recording(rows):
    """An in-memory tuneup file holding conv_calls rows: (api, call_kind, plan_id, n)."""
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    db.execute("insert into strings (id, value) values (1, 'cudnnBackendExecute')")
    for i, (api, kind, plan, n) in enumerate(rows):
        db.execute("insert into conv_calls (id, start_ns, end_ns, tid, api, name_id, call_kind, direction, n, c, h, w, "
                   "k, filter_c, r, s, algo_source, plan_id, status) values (?, ?, ?, 1, ?, 1, ?, 1, ?, 64, 56, 56, "
                   "64, 64, 3, 3, 2, ?, 0)", (i + 1, i * 10, i * 10 + 5, api, kind, n, plan))
    return db


class AutotunerSearches(unittest.TestCase):
    def searches(self, rows):
        return check.number(recording(rows), "SEARCHES")

    def test_legacy_find_calls(self):
        self.assertEqual(self.searches([(1, 2, None, 32), (1, 2, None, 32), (1, 1, None, 32)]), 2)

    def test_backend_plans_tried_for_one_shape(self):
        # benchmark on, torch 2.x: three candidate plans for the shape, then the winner every step.
        runs = [(2, 1, plan, 32) for plan in (1, 2, 3)] + [(2, 1, 2, 32)] * 5
        self.assertEqual(self.searches(runs), 1)

    def test_heuristics_only(self):
        # benchmark off: one plan per shape, however many shapes and steps.
        runs = [(2, 3, None, 32), (2, 1, 1, 32), (2, 1, 1, 32), (2, 3, None, 16), (2, 1, 2, 16), (2, 1, 2, 16)]
        self.assertEqual(self.searches(runs), 0)

    def test_the_sample_checks_use_it(self):
        queries = [c[1] for c in check.SAMPLES["cudnn_autotuner"]["checks"]]
        self.assertIn("SEARCHES", queries)


if __name__ == "__main__":
    unittest.main()
