#!/usr/bin/python3
"""kiln serve and kiln worker on a real, throwaway PostgreSQL 15 server (Debian's postgresql:
initdb into a temporary folder, a Unix socket there, no TCP): the server queues, two worker
processes share the queue.

1. A worker is killed with SIGKILL mid-job (KILN_TEST_JOB_SLEEP_MS holds it after its claim): the
   other takes the job over once the lease (2 s) has expired, and the job completes once, as
   attempt 2, with an artifact `kiln run` runs.
2. A worker is stopped (SIGSTOP) mid-job past its lease, the other takes over and commits, then
   the stopped one is continued: its heartbeat or commit is refused (fencing); the results stay
   the other's.
3. Six jobs, two workers: every job succeeds and is committed exactly once (the workers' logs).
   The server's /metrics then counts the 8 jobs succeeded (read from PostgreSQL) and none queued.

    tests/serve/serve_postgres.py KILN MODEL WORKDIR
As root, the PostgreSQL server runs as the user postgres (runuser): initdb refuses root.
"""
import hashlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest, free_port  # noqa: E402

PG_BIN = "/usr/lib/postgresql/15/bin"


class Postgres:
    """A PostgreSQL 15 cluster in a temporary folder, listening on a socket there only."""

    def __init__(self):
        if not os.path.exists(f"{PG_BIN}/initdb"):
            raise SystemExit(f"FAIL: no {PG_BIN}/initdb (scripts/install-deps.sh installs postgresql)")
        self.dir = tempfile.mkdtemp(prefix="kiln-pg-")
        self.as_user = []
        if os.geteuid() == 0:  # initdb refuses root: the cluster is the postgres user's
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        self.data = os.path.join(self.dir, "data")
        self.run(f"{PG_BIN}/initdb", "-D", self.data, "-U", "kiln", "-A", "trust", "--no-sync")
        self.run(f"{PG_BIN}/pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-o",
                 f"-k {self.dir} -p {self.port} -c listen_addresses='' -c fsync=off", "start")
        self.url = f"postgresql:///postgres?host={self.dir}&port={self.port}&user=kiln"

    def run(self, *args):
        r = subprocess.run([*self.as_user, *args], capture_output=True, text=True, cwd=self.dir)
        if r.returncode != 0:
            raise SystemExit(f"FAIL: {' '.join(args[:2])}: {r.stdout[-500:]} {r.stderr[-500:]}")

    def stop(self):
        subprocess.run([*self.as_user, f"{PG_BIN}/pg_ctl", "-D", self.data, "-m", "immediate", "stop"],
                       capture_output=True, cwd=self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    kiln, model, work = sys.argv[1:4]
    pg = Postgres()
    try:
        return run(kiln, model, work, pg)
    finally:
        pg.stop()


def run(kiln, model, work, pg):
    st = ServeTest("serve_postgres", kiln, work, db=pg.url)
    failures, expect = st.failures, st.expect
    write, admin = st.token("write"), st.token("admin")

    def worker(label, sleep_ms):
        env = dict(os.environ, KILN_TEST_JOB_SLEEP_MS=str(sleep_ms))  # test-only: hold each job after its claim
        return st.worker(label, ["--lease", "2"], env)

    def held_by(job, pid, seconds=60):
        end = time.time() + seconds
        while time.time() < end:
            body = c.call("GET", f"/v1/jobs/{job}", tok=write)[1]
            if body["state"] == "running" and f":{pid}:" in body["worker"]:
                return body
            time.sleep(0.05)
        raise SystemExit(f"FAIL: job {job} was not claimed by worker {pid}: {body}")

    with st.serve(["--workers", "0"]) as c:
        expect("upload", c.call("POST", "/v1/models/mlp", open(model, "rb").read(), write)[0], 201)
        compile_request = lambda seed: {"targets": ["x86-64"], "runs": 1, "seed": seed}
        # An alias's policy kept in PostgreSQL: set, replaced, read with the model, removed.
        pol = "/v1/models/mlp/aliases/production/policy"
        c.call("PUT", pol, {"latency_regression": 0.5}, admin)
        expect("policy replaced", c.call("PUT", pol, {"tolerance": {"max_abs": 0.1}}, admin)[1].get("policy"),
               {"tolerance": {"max_abs": 0.1}})
        expect("policy with the model", c.call("GET", "/v1/models/mlp", tok=write)[1].get("alias_policies"),
               {"production": {"tolerance": {"max_abs": 0.1}}})
        expect("policy removed", c.call("PUT", pol, {}, admin)[1].get("policy", "?"), None)

        # 1. SIGKILL mid-job: taken over after the lease, completed once.
        job1 = c.call("POST", "/v1/models/mlp/versions/1/compile", compile_request(1), write)[1]["job"]
        a, a_log = worker("a", 60000)
        held_by(job1, a.pid)
        a.kill()
        a.wait()
        b, b_log = worker("b", 500)
        done = c.wait_job(job1, write)
        expect("job 1 after the kill", (done["state"], done["attempt"], f":{b.pid}:" in done["worker"]),
               ("succeeded", 2, True))
        if "attempt 1" not in done["log"] or "lost its lease" not in done["log"]:
            failures.append(f"job 1 log: {done['log']!r}")
        t = done["targets"][0]
        status, blob, _ = c.call("GET", f"/v1/jobs/{job1}/artifacts/x86-64", tok=write, raw=True)
        expect("job 1 artifact", (status, hashlib.sha256(blob).hexdigest()), (200, t["artifact"]["sha256"]))
        art = os.path.join(work, "mlp.kiln")
        open(art, "wb").write(blob)
        x = np.random.default_rng(5).standard_normal((1, 768)).astype(np.float32)
        outs = [st.kiln_run(model, x, "onnx"), st.kiln_run(art, x, "kiln")]
        if not np.allclose(outs[0], outs[1], rtol=1e-3, atol=1e-4):
            failures.append("kiln run of the artifact: outputs differ from the .onnx's")

        # 2. SIGSTOP past the lease: the other worker commits, the stopped one is fenced off.
        c2, c2_log = worker("c", 6000)
        job2 = c.call("POST", "/v1/models/mlp/versions/1/compile", compile_request(2), write)[1]["job"]
        body = c.wait_job(job2, write, until=("running",))
        holder, other = (b, c2) if f":{b.pid}:" in body["worker"] else (c2, b)
        holder.send_signal(signal.SIGSTOP)
        time.sleep(2.5)  # the lease (2 s) runs out while the holder is stopped
        done2 = c.wait_job(job2, write)
        holder.send_signal(signal.SIGCONT)
        expect("job 2", (done2["state"], done2["attempt"], f":{other.pid}:" in done2["worker"]), ("succeeded", 2, True))
        holder_log = b_log if holder is b else c2_log
        end = time.time() + 30
        while time.time() < end and not re.search(rf"job {job2} attempt 1: (lost its lease|refused at commit)",
                                                  open(holder_log).read()):
            time.sleep(0.1)
        if not re.search(rf"job {job2} attempt 1: (lost its lease|refused at commit)", open(holder_log).read()):
            failures.append(f"the stopped worker was not fenced off: {open(holder_log).read()[-800:]}")
        expect("job 2 unchanged by the stopped worker", c.call("GET", f"/v1/jobs/{job2}", tok=write)[1]["worker"],
               done2["worker"])

        # 3. Six jobs, two workers: each done and committed once.
        jobs = [c.call("POST", "/v1/models/mlp/versions/1/compile", compile_request(10 + i), write)[1]["job"]
                for i in range(6)]
        for j in jobs:
            expect(f"job {j}", c.wait_job(j, write)["state"], "succeeded")
        logs = "".join(open(p).read() for p in (a_log, b_log, c2_log))
        for j in [job1, job2, *jobs]:
            commits = re.findall(rf"job {j} attempt \d+: committed", logs)
            expect(f"commits of job {j}", len(commits), 1)
        # The job list (the web page's) from PostgreSQL: newest first, every job once.
        status, body = c.call("GET", "/v1/jobs?limit=20", tok=write)
        expect("job list", (status, [j["job"] for j in body.get("jobs", [])]),
               (200, sorted([job1, job2, *jobs], reverse=True)))
        # The server's /metrics counts the jobs in PostgreSQL (every worker's): all 8 succeeded.
        status, text, _ = c.call("GET", "/metrics", raw=True)
        lines = text.decode().splitlines()
        expect("metrics: jobs succeeded", [l for l in lines if l.startswith('kiln_compile_jobs{state="succeeded"}')],
               ['kiln_compile_jobs{state="succeeded"} 8'])
        expect("metrics: queue depth", [l for l in lines if l.startswith("kiln_compile_queue_depth")],
               ["kiln_compile_queue_depth 0"])
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
