#!/usr/bin/python3
"""Per-call latency of kiln.InferenceSession.run from Python, to set against `kiln bench` (C++):

    PYTHONPATH=build/python bench/python_overhead.py build/models/mlp.onnx 1
    build/kiln bench build/models/mlp.onnx --threads 1 --iterations 4000 --json

Arguments: the model and intra_op_num_threads; symbolic dims are 1, inputs float32 (docs/python.md)."""
import os, sys, time, numpy as np, kiln
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from percentiles import percentiles
path = sys.argv[1]; threads = int(sys.argv[2])
so = kiln.SessionOptions(); so.intra_op_num_threads = threads
s = kiln.InferenceSession(path, so)
i = s.get_inputs()[0]
shape = [d if isinstance(d, int) else 1 for d in i.shape]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
feed = {i.name: x}
for _ in range(200): s.run(None, feed)
t = []
pc = time.perf_counter_ns
for _ in range(4000):
    a = pc(); s.run(None, feed); t.append(pc() - a)
p50, p90, p99, least = (x / 1000 for x in percentiles(t, .5, .9, .99, 0))
print("python session.run latency p50 %.1f us, p90 %.1f, p99 %.1f, mean %.1f, min %.1f us (4000 runs)" % (p50, p90, p99, sum(t) / len(t) / 1000, least))
