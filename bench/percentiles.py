"""Percentiles of measured times: one definition for kiln's Python benchmarks and load tests
(bench/, tests/serve/). The nearest rank: the q-percentile of n values is the ceil(q * n)-th
smallest (the smallest for q = 0), never an interpolation, so every figure printed is a time that
was measured; p100 is the largest."""
import math


def percentiles(values, *qs):
    """The q-percentiles (each 0 <= q <= 1) of values, in any order, as a tuple; nan for each
    when there are no values."""
    for q in qs:
        if not 0 <= q <= 1:
            raise ValueError(f"percentile {q}: expected 0 <= q <= 1")
    s = sorted(values)
    if not s:
        return tuple(float("nan") for _ in qs)
    return tuple(s[max(0, math.ceil(q * len(s)) - 1)] for q in qs)


def percentile(values, q):
    """The q-percentile (0 <= q <= 1) of values; nan when there are none."""
    return percentiles(values, q)[0]
