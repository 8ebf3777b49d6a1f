"""Several Python threads calling run() on one session at once get their own right answers."""
import threading
import time

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
    # A second Python thread makes progress while the first is inside one run() of ~0.1 s; were
    # the GIL held, it could not tick at all until run() returned.
    m, _ = mlp_model(batch=256, in_dim=512, hidden=2048, out_dim=512)
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    x = np.ones((256, 512), np.float32)
    sess.run(None, {"x": x})  # planned and warm
    ticks = [0]
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.0002)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        time.sleep(0.01)
        before = ticks[0]
        t0 = time.perf_counter()
        sess.run(None, {"x": x})
        elapsed = time.perf_counter() - t0
        during = ticks[0] - before
    finally:
        done.set()
        t.join()
    assert during >= 5, f"ticker ran {during} times during a {elapsed * 1e3:.0f} ms run: the GIL was held"
