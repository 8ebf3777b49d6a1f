#!/usr/bin/python3
"""bench/percentiles.py: the nearest rank on known lists, every order, the ends and the refusals."""
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from percentiles import percentile, percentiles  # noqa: E402


class Percentiles(unittest.TestCase):
    def test_nearest_rank(self):
        v = list(range(1, 101))  # 1..100: the q-percentile is 100 q, rounded up
        self.assertEqual(percentiles(v, 0.5, 0.9, 0.99, 1.0), (50, 90, 99, 100))
        self.assertEqual(percentile(v, 0.0), 1)
        self.assertEqual(percentile(v, 0.501), 51)
        self.assertEqual(percentiles([3.0, 1.0, 2.0], 0.5, 0.99), (2.0, 3.0))  # any order
        self.assertEqual(percentile([7], 0.5), 7)
        random.seed(1)
        shuffled = random.sample(v, len(v))
        self.assertEqual(percentiles(shuffled, 0.5, 0.99), (50, 99))

    def test_a_measured_value_never_an_interpolation(self):
        v = [0.1, 0.4, 10.0, 11.0]
        for q in (0, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1):
            self.assertIn(percentile(v, q), v)

    def test_empty_and_refused(self):
        self.assertTrue(math.isnan(percentile([], 0.5)))
        with self.assertRaises(ValueError):
            percentile([1], 1.5)
        with self.assertRaises(ValueError):
            percentile([1], -0.1)


if __name__ == "__main__":
    unittest.main()
