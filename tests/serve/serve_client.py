"""What the kiln serve tests share: a free loopback port, a JSON client with a Bearer token, a
server started and waited for, a job polled until it is done."""
import json
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
