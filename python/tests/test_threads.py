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
    # A second Python thread makes progress while the first is inside run(). Were the GIL held
    # across run(), the ticker could tick at most once per call (at its boundary); with it
    # released, it ticks all through. The session uses one thread so that a core is free for the
    # ticker, and the runs add up to >= 0.3 s so that a loaded machine still shows the difference.
    m, _ = mlp_model(batch=2048, in_dim=512, hidden=2048, out_dim=512)
    opts = kiln.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"), opts)
    x = np.ones((2048, 512), np.float32)
    sess.run(None, {"x": x})  # planned and warm
    ticks = [0]
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.0002)

    t = threading.Thread(target=ticker)
    t.start()
    runs, during, elapsed = 0, 0, 0.0
    try:
        time.sleep(0.01)
        while elapsed < 0.3 or runs < 2:
            before = ticks[0]
            t0 = time.perf_counter()
            sess.run(None, {"x": x})
            elapsed += time.perf_counter() - t0
            during += ticks[0] - before
            runs += 1
    finally:
        done.set()
        t.join()
    assert during >= 3 * runs + 5, (
        f"ticker ran {during} times during {runs} runs of {elapsed * 1e3:.0f} ms in all: the GIL was held")
