#!/usr/bin/python3
"""Tests of bench/compare_outputs.py: the verdict bench/run.sh prints in its "outputs agree" column.

Run: /usr/bin/python3 bench/compare_outputs_test.py   (a ctest, label unit)
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from onnx import numpy_helper

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_outputs.py")


def write_outputs(folder, arrays):
    os.makedirs(folder, exist_ok=True)
    for i, a in enumerate(arrays):
        with open(os.path.join(folder, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(a), f"out{i}").SerializeToString())


class CompareOutputs(unittest.TestCase):
    def verdict(self, got, want, *flags):
        """Exit status of compare_outputs.py on two lists of arrays."""
        with tempfile.TemporaryDirectory() as d:
            write_outputs(os.path.join(d, "got"), got)
            write_outputs(os.path.join(d, "want"), want)
            r = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "got"), os.path.join(d, "want"),
                                *flags], capture_output=True, text=True)
            return r.returncode

    def test_within_rtol_and_atol(self):
        w = np.array([1.0, 100.0, 0.0], np.float32)
        self.assertEqual(self.verdict([w * np.float32(1.0009) + np.float32(5e-5)], [w]), 0)

    def test_beyond_tolerance(self):
        w = np.array([1.0, 2.0], np.float32)
        self.assertEqual(self.verdict([w + np.float32(0.01)], [w]), 1)

    def test_atol_scales_with_the_outputs_largest_magnitude(self):
        # Logits reaching 8.8: 3e-4 off on an element near 0 is float32 rounding, 2e-3 is not; an
        # output below 1 keeps the plain atol.
        w = np.array([8.8, -3.0, 0.0408981], np.float32)
        self.assertEqual(self.verdict([w - np.array([0, 0, 3e-4], np.float32)], [w]), 0)
        self.assertEqual(self.verdict([w - np.array([0, 0, 2e-3], np.float32)], [w]), 1)
        small = np.array([0.5, 0.0], np.float32)
        self.assertEqual(self.verdict([small + np.array([0, 3e-4], np.float32)], [small]), 1)

    def test_nan_matches_only_nan(self):
        self.assertEqual(self.verdict([np.array([np.nan], np.float32)], [np.array([np.nan], np.float32)]), 0)
        self.assertEqual(self.verdict([np.array([np.nan], np.float32)], [np.array([1.0], np.float32)]), 1)
        self.assertEqual(self.verdict([np.array([1.0], np.float32)], [np.array([np.nan], np.float32)]), 1)

    def test_infinities_must_be_equal(self):
        self.assertEqual(self.verdict([np.array([np.inf], np.float32)], [np.array([np.inf], np.float32)]), 0)
        self.assertEqual(self.verdict([np.array([-np.inf], np.float32)], [np.array([np.inf], np.float32)]), 1)

    def test_shape_and_dtype_must_match(self):
        self.assertEqual(self.verdict([np.zeros((2, 3), np.float32)], [np.zeros((3, 2), np.float32)]), 1)
        self.assertEqual(self.verdict([np.zeros(3, np.float64)], [np.zeros(3, np.float32)]), 1)

    def test_integers_exactly(self):
        self.assertEqual(self.verdict([np.array([1, 2], np.int64)], [np.array([1, 2], np.int64)]), 0)
        self.assertEqual(self.verdict([np.array([1, 3], np.int64)], [np.array([1, 2], np.int64)]), 1)

    def test_every_output_is_compared(self):
        a = np.ones(2, np.float32)
        self.assertEqual(self.verdict([a, a], [a, a * 2]), 1)
        self.assertEqual(self.verdict([a], [a, a]), 1)  # one missing

    def test_cosine_for_quantized_outputs(self):
        rng = np.random.default_rng(0)
        w = rng.standard_normal(1000).astype(np.float32)
        near = w + np.float32(0.05) * rng.standard_normal(1000).astype(np.float32)  # cosine ~0.9988
        self.assertEqual(self.verdict([near], [w]), 1)  # beyond rtol/atol
        self.assertEqual(self.verdict([near], [w], "--cosine", "0.99"), 0)
        self.assertEqual(self.verdict([near], [w], "--cosine", "0.9999"), 1)
        self.assertEqual(self.verdict([-w], [w], "--cosine", "0.99"), 1)
        ints = np.array([1, 2], np.int64)
        self.assertEqual(self.verdict([ints + 1], [ints], "--cosine", "0.5"), 1)  # integers stay exact

    def test_missing_folders_are_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "x"), os.path.join(d, "y")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
