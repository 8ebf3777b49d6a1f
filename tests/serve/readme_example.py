#!/usr/bin/python3
"""The README's service example, run as written: the shell block after the README's
`<!-- readme-service-example -->` marker, in a folder that looks like the repository's root (its
entries linked, `build` the build folder), first with SQLite, then with PostgreSQL (a throwaway
PostgreSQL 15, as tests/serve/serve_postgres.py starts one). Two substitutions only, each
checked to apply: the port (a free one for 8080) and, for PostgreSQL, what the block's comment
says: `--db URL` in place of token create's `--data srv`, and after serve's.

    tests/serve/readme_example.py SOURCE_DIR BUILD_DIR WORKDIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import free_port  # noqa: E402
from serve_postgres import Postgres  # noqa: E402

MARKER = "<!-- readme-service-example -->"


def readme_block(source):
    text = open(os.path.join(source, "README.md")).read()
    m = re.search(re.escape(MARKER) + r"\s*```sh\n(.*?)```", text, re.S)
    if not m:
        raise SystemExit(f"FAIL: README.md has no ```sh block after {MARKER}")
    return m.group(1)


def substitute(block, old, new, failures, what):
    if old not in block:
        failures.append(f"{what}: the README's block has no '{old}' any more (update this test)")
    return block.replace(old, new)


def run_block(block, source, build, work, label, failures):
    root = os.path.join(work, label)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for entry in os.listdir(source):
        if entry not in ("build", ".git"):
            os.symlink(os.path.join(source, entry), os.path.join(root, entry))
    os.symlink(build, os.path.join(root, "build"))
    script = os.path.join(root, "example.sh")
    open(script, "w").write("set -euo pipefail\n" + block)
    log = os.path.join(root, "example.log")
    with open(log, "w") as f:  # a file, not a pipe: the server started with & holds its stdout
        p = subprocess.Popen(["bash", script], cwd=root, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            p.wait(timeout=600)
        except subprocess.TimeoutExpired:
            failures.append(f"{label}: timed out after 600 s")
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the server, should the block have stopped before its kill
            except ProcessLookupError:
                pass
            p.wait()
    out = open(log).read()
    print(f"--- {label}:\n{out[-3000:]}")
    checks = {"exit 0": p.returncode == 0,
              "the job succeeded": re.search(r"^succeeded$", out, re.M) is not None,
              "the artifact downloaded and run": os.path.getsize(os.path.join(root, "resnet50.kiln")) > 1e6
              if os.path.exists(os.path.join(root, "resnet50.kiln")) else False,
              "an inference answer": '"outputs":[' in out and '"model_name":"resnet50"' in out}
    for what, ok in checks.items():
        if not ok:
            failures.append(f"{label}: {what}")


def main():
    source, build, work = (os.path.abspath(a) for a in sys.argv[1:4])
    os.makedirs(work, exist_ok=True)
    failures = []
    block = readme_block(source)
    port = lambda b: substitute(b, "127.0.0.1:8080", f"127.0.0.1:{free_port()}", failures, "port")
    run_block(port(block), source, build, work, "sqlite", failures)

    pg = Postgres()
    try:
        db = f"--db '{pg.url}'"
        pg_block = substitute(block, "token create --data srv", f"token create {db}", failures, "postgres token")
        pg_block = substitute(pg_block, "serve --data srv", f"serve --data srv {db}", failures, "postgres serve")
        run_block(port(pg_block), source, build, work, "postgres", failures)
    finally:
        pg.stop()
    for f in failures:
        print("FAIL", f)
    print(f"readme_service_example: {'passed' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
