"""What the kiln serve tests share: a free loopback port, a JSON client with a Bearer token, a
server started and waited for, a job polled until it is done, and ServeTest: a test's folder,
tokens, server, workers and verdict."""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None, tok=None, raw=False):
        """(status, JSON body) or, with raw, (status, bytes, headers)."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=body, method=method)
        if body is not None:  # (urllib's default, form-urlencoded, is capped at 8 KB by httplib)
            req.add_header("Content-Type", "application/octet-stream")
        if tok:
            req.add_header("Authorization", "Bearer " + tok)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                data = r.read()
                return (r.status, data, dict(r.headers)) if raw else (r.status, json.loads(data or b"null"))
        except urllib.error.HTTPError as e:
            data = e.read()
            return (e.code, data, dict(e.headers)) if raw else (e.code, json.loads(data or b"null"))

    def wait_up(self, log_path, seconds=30):
        end = time.time() + seconds
        while time.time() < end:
            try:
                if self.call("GET", "/v2/health/live")[0] == 200:
                    return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.05)
        raise SystemExit("FAIL: kiln serve did not come up: " + open(log_path).read()[-800:])

    def wait_job(self, job, tok, seconds=240, until=("succeeded", "failed", "fell-back")):
        end = time.time() + seconds
        body = None
        while time.time() < end:
            status, body = self.call("GET", f"/v1/jobs/{job}", tok=tok)
            if status == 200 and body["state"] in until:
                return body
            time.sleep(0.1)
        raise SystemExit(f"FAIL: job {job} not {until} after {seconds} s: {body}")


def start_server(kiln, args, log_path, env=None):
    log = open(log_path, "w")
    return subprocess.Popen([kiln, "serve", *args], stdout=log, stderr=log, env=env)


def create_token(kiln, data, scope):
    """A new token of `scope` (read, write or admin) from `kiln token create`, kept under data."""
    return subprocess.run([kiln, "token", "create", "--data", data, "--scope", scope],
                          check=True, capture_output=True, text=True).stdout.strip()


class ServeTest:
    """What a serve test does around its checks: a fresh WORK folder (the server's data in
    WORK/data, its log in WORK/serve.log), tokens, `kiln serve` on a free loopback port, the
    failures the checks collect, and the verdict:

        t = ServeTest("serve_x", kiln, work)
        read, write = t.token("read"), t.token("write")
        with t.serve(["--workers", "0"]) as c:      # a Client of the server, once it answers
            t.expect("upload", c.call("POST", "/v1/models/m", data, write)[0], 201)
        return t.verdict()                            # FAIL lines, the log's tail, the exit code
    """

    def __init__(self, name, kiln, work, db=None):
        """`db`: a PostgreSQL URL for the registry, tokens and job queue (kiln serve --db); the
        content store stays in WORK/data."""
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        self.name, self.kiln, self.work, self.db = name, kiln, work, db
        self.data = os.path.join(work, "data")
        self.log = os.path.join(work, "serve.log")
        self.failures = []
        self.port = self.server = None
        self.workers = []

    def token(self, scope):
        if self.db:
            return subprocess.run([self.kiln, "token", "create", "--db", self.db, "--scope", scope],
                                  check=True, capture_output=True, text=True).stdout.strip()
        return create_token(self.kiln, self.data, scope)

    def worker(self, label, args=(), env=None):
        """`kiln worker` on the test's store (--db, --data) with ARGS, its output in
        WORK/worker-LABEL.log: (process, log path). Stopped (continued first, if stopped) when the
        server's `serve` block ends, or by `stop_workers`."""
        log = os.path.join(self.work, f"worker-{label}.log")
        store = ["--db", self.db] if self.db else []
        p = subprocess.Popen([self.kiln, "worker", *store, "--data", self.data, *args], env=env,
                             stdout=open(log, "w"), stderr=subprocess.STDOUT)
        self.workers.append(p)
        return p, log

    def stop_workers(self):
        for p in self.workers:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.workers = []

    def kiln_run(self, path, x, label, input_name="input"):
        """`kiln run PATH` (a model or an artifact) on the array x as its one input: the first output
        as an array (input and outputs under WORK/run-LABEL)."""
        import onnx  # noqa: E402 (only the tests that run models need onnx)
        from onnx import numpy_helper
        inputs, outputs = os.path.join(self.work, f"run-{label}", "in"), os.path.join(self.work, f"run-{label}", "out")
        os.makedirs(inputs, exist_ok=True)
        with open(os.path.join(inputs, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, input_name).SerializeToString())
        subprocess.run([self.kiln, "run", path, "--inputs", inputs, "--outputs", outputs], check=True, capture_output=True)
        return numpy_helper.to_array(onnx.load_tensor(os.path.join(outputs, "output_0.pb")))

    def expect(self, what, got, want):
        if got != want:
            self.failures.append(f"{what}: got {got!r}, expected {want!r}")

    @contextlib.contextmanager
    def serve(self, args=(), env=None, log=None):
        """`kiln serve --data WORK/data --listen 127.0.0.1:PORT ARGS`, stopped on leaving; its output
        in `log` (default WORK/serve.log)."""
        self.port = free_port()
        log = log or self.log
        store = ["--db", self.db] if self.db else []
        self.server = start_server(self.kiln, [*store, "--data", self.data, "--listen", f"127.0.0.1:{self.port}", *args],
                                   log, env)
        client = Client(f"http://127.0.0.1:{self.port}")
        try:
            client.wait_up(log)
            yield client
        finally:
            self.stop_workers()
            self.server.terminate()
            self.server.wait(timeout=60)

    def verdict(self, log_tail=3000, most=None):
        """Prints each failure (the first `most`), then the server log's tail, and the test's last
        line; the exit code."""
        for f in self.failures[:most]:
            print("FAIL", f)
        if self.failures and os.path.exists(self.log):
            print("server log:", open(self.log).read()[-log_tail:])
        print(f"{self.name}: {'passed' if not self.failures else f'{len(self.failures)} failures'}")
        return 1 if self.failures else 0
