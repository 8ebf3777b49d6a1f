"""Several Python threads calling run() on one session at once get their own right answers."""
import threading

import numpy as np

import kiln
from conftest import mlp_model, save


def test_threads_share_a_session(tmp_path):
    m, ref = mlp_model(hidden=64)
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    errors = []
    barrier = threading.Barrier(4)

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            barrier.wait()
            for i in range(40):
                x = rng.standard_normal((1 + (seed + i) % 3, 8)).astype(np.float32)
                (y,) = sess.run(None, {"x": x})
                np.testing.assert_allclose(y, ref(x), rtol=1e-4, atol=1e-4)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gil_released_while_running(tmp_path):
    # A second Python thread makes progress while the first is inside run().
    m, _ = mlp_model(in_dim=256, hidden=1024, out_dim=256)
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    x = np.ones((256, 256), np.float32)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        ticks.clear()
        for _ in range(10):
            sess.run(None, {"x": x})
        n = len(ticks)
    finally:
        done.set()
        t.join()
    assert n > 3, f"ticker ran {n} times during 10 runs: the GIL was held"
