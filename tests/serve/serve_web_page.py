#!/usr/bin/python3
"""kiln serve's web page in a real browser: a kiln serve on loopback with a model uploaded and a
compile job done by the test, then Debian's chromium, headless, loads http://127.0.0.1:PORT/#token=...
and its DOM (after the page's script has read the API) shows the model, its alias, the job with its
state and per-target metrics and its report link; no console message at all (errors, uncaught
exceptions, failed loads) and no script error; the page without a token shows no registry data; GET /v1/jobs and the job's
analyze report answer.

    tests/serve/serve_web_page.py KILN MODEL WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def dump_dom(url, work):
    """(DOM text, chromium's console lines) after the page's script ran (virtual time)."""
    profile = tempfile.mkdtemp(dir=work)
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                        "--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000", "--dump-dom", url],
                       capture_output=True, text=True, timeout=120)
    console = [line for line in r.stderr.splitlines() if "CONSOLE" in line]
    return r.stdout, console


def main():
    kiln, model, work = sys.argv[1:4]
    if not shutil.which("chromium"):
        print("FAIL: chromium is not installed (scripts/install-deps.sh installs it)")
        return 1
    st = ServeTest("serve_web_page", kiln, work)
    failures, expect = st.failures, st.expect
    write, read, admin = st.token("write"), st.token("read"), st.token("admin")
    with st.serve(["--workers", "1"]) as c:
        port = st.port
        expect("upload", c.call("POST", "/v1/models/webmlp", open(model, "rb").read(), write)[0], 201)
        status, q = c.call("POST", "/v1/models/webmlp/versions/1/compile", {"targets": ["x86-64"], "runs": 2}, write)
        job = c.wait_job(q["job"], read)
        expect("job", job["state"], "succeeded")
        expect("alias", c.call("PUT", "/v1/models/webmlp/aliases/staging", {"version": 1}, admin)[0], 200)

        status, body = c.call("GET", "/v1/jobs?limit=5", tok=read)
        jobs = body.get("jobs", []) if status == 200 else []
        expect("job list", [(j["job"], j["state"]) for j in jobs], [(q["job"], "succeeded")])
        report = (jobs[0].get("reports") or {}).get("analyze") if jobs else None
        status, html, headers = c.call("GET", report or "/v1/jobs/1/reports/analyze", tok=read, raw=True)
        expect("analyze report", (status, b"x86-64" in html, headers.get("Content-Type", "").startswith("text/html")),
               (200, True, True))
        expect("job list without a token", c.call("GET", "/v1/jobs")[0], 401)
        expect("job list, bad limit", c.call("GET", "/v1/jobs?limit=0", tok=read)[0], 400)
        status, page, headers = c.call("GET", "/", raw=True)
        expect("page", (status, headers.get("Content-Type", "").startswith("text/html")), (200, True))
        if re.search(rb"""(src|href)=["']?(https?:)?//""", page):
            failures.append("the page names an external resource")

        dom, console = dump_dom(f"http://127.0.0.1:{port}/#token={read}", work)
        for needle in ("webmlp", "staging", f"job {q['job']}", "succeeded", "x86-64", "analyze report", "p50 ms"):
            if needle not in dom:
                failures.append(f"the rendered page has no {needle!r}")
        m = re.search(r'<div id="errors">(.*?)</div>', dom, re.S)
        expect("the page's error box", m.group(1).strip() if m else "(no error box)", "")
        # The p50 cell holds the job's measured latency.
        p50 = job["targets"][0]["measured"]["latency_p50_ms"]
        if f">{round(p50, 3):g}<" not in dom and f">{p50:.3f}".rstrip("0") not in dom:
            failures.append(f"the page does not show the p50 {p50}")
        # chromium logs every console message (and uncaught errors) as INFO:CONSOLE; the page logs none.
        expect("console messages", console, [])

        dom, _ = dump_dom(f"http://127.0.0.1:{port}/", work)
        if "webmlp" in dom or "Token" not in dom:
            failures.append("the page without a token shows registry data (or no token form)")
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
