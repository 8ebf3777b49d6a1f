#!/usr/bin/python3
"""Every case of the hostile-model corpus (tests/hostile, make_corpus.py) uploaded to kiln serve:
each malformed one is refused with 400 and a one-line error, none is stored, no case gets a 5xx,
and the server answers its health check after all of them.

    tests/serve/serve_hostile_uploads.py KILN CORPUS_DIR WORKDIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def main():
    kiln, corpus, work = sys.argv[1:4]
    st = ServeTest("serve_hostile_uploads", kiln, work)
    token = st.token("write")
    failures, bad, ok = st.failures, 0, 0
    with st.serve() as c:
        call = lambda method, path, body=None: c.call(method, path, body, token)
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
    print(f"serve_hostile_uploads: {bad} malformed and {ok} valid cases")
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
