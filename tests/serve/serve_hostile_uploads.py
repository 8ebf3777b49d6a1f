#!/usr/bin/python3
"""Every case of the hostile-model corpus (tests/hostile, make_corpus.py) uploaded to kiln serve:
each malformed one is refused with 400 and a one-line error, none is stored, no case gets a 5xx,
and the server answers its health check after all of them.

    tests/serve/serve_hostile_uploads.py KILN CORPUS_DIR WORKDIR
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def main():
    kiln, corpus, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    data = os.path.join(work, "data")
    token = subprocess.run([kiln, "token", "create", "--data", data, "--scope", "write"], check=True,
                           capture_output=True, text=True).stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(os.path.join(work, "serve.log"), "w")
    server = subprocess.Popen([kiln, "serve", "--data", data, "--listen", f"127.0.0.1:{port}"], stdout=log, stderr=log)

    def call(method, path, body=None):
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method)
        req.add_header("Authorization", "Bearer " + token)
        req.add_header("Content-Type", "application/octet-stream")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    failures, bad, ok = [], 0, 0
    try:
        for _ in range(200):
            try:
                if call("GET", "/v2/health/live")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)
        cases = [line.split("\t")[0] for line in open(os.path.join(corpus, "manifest.tsv")) if line.strip() and not line.startswith("#")]
        valid = [line.split("\t")[0].strip() for line in open(os.path.join(corpus, "manifest_ok.tsv")) if line.strip() and not line.startswith("#")]
        for name in cases + valid:
            body = open(os.path.join(corpus, name, "model.onnx"), "rb").read()
            status, reply = call("POST", "/v1/models/case", body)
            if name in cases:
                bad += 1
                error = (reply or {}).get("error", "")
                if status != 400 or not error or "\n" in error:
                    failures.append(f"{name}: {status} {reply!r:.200}, expected 400 and a one-line error")
            else:
                ok += 1
                if status >= 500:  # a valid model may still need files beside it (external data): 400
                    failures.append(f"{name}: {status} {reply!r:.200}")
        status, listing = call("GET", "/v1/models")
        stored = sum(len(m["versions"]) for m in listing.get("models", []))
        if stored > len(valid):
            failures.append(f"{stored} versions stored, at most the {len(valid)} valid cases may be")
        if call("GET", "/v2/health/live")[0] != 200:
            failures.append("the server does not answer after the corpus")
    finally:
        server.terminate()
        server.wait(timeout=30)
    for f in failures:
        print("FAIL", f)
    print(f"serve_hostile_uploads: {bad} malformed and {ok} valid cases, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
