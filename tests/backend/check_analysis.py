#!/usr/bin/python3
"""Checks `kiln analyze --json` of a torch-exported CNN (tests/backend/models_xnnpack.sh):

    check_analysis.py DEFAULT.json SPLIT.json

DEFAULT: native (this machine's row), x86-64 and aarch64-linux with each target's order: every node
placed; aarch64 analyzed from the claims alone, kiln's engine (cpu, first there too) taking every node. SPLIT: --backends
xnnpack,cpu with the plugin refusing Add: the Adds on cpu with that reason, the rest on xnnpack in
several partitions whose boundary copies are counted.
"""
import json
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


default = json.load(open(sys.argv[1]))
split = json.load(open(sys.argv[2]))
if [t["name"] for t in default["targets"]][1:] != ["x86-64", "aarch64-linux"] or not default["targets"][0]["native"]:
    fail(f"targets: {[t['name'] for t in default['targets']]}")
if default["missing_backends"]:
    fail(f"missing backends: {default['missing_backends']}")
for t in default["targets"]:
    placed = sum(sum(o["placed"].values()) for o in t["ops"])
    if placed != default["nodes"] - default["folded"]:
        fail(f"{t['name']}: {placed} nodes placed of {default['nodes'] - default['folded']}")
    if any(p["backend"] not in ("folded", "cpu", "xnnpack", "reference") for p in t["placement"]):
        fail("unknown backend in placement")
arm = default["targets"][2]
if arm["runs_here"] or arm["compiled"] or arm["order"][0] != "cpu":
    fail("aarch64-linux: runs here, compiled, or cpu not first")
if {p["backend"] for p in arm["partitions"]} - {"cpu", "reference"}:
    fail(f"aarch64-linux partitions: {arm['partitions']}")

t = split["targets"][0]
adds = [o for o in t["ops"] if o["op"] == "Add"]
if not adds or adds[0]["placed"] != {"cpu": adds[0]["nodes"]}:
    fail(f"Add placement: {adds}")
if adds[0]["refused"] != [{"backend": "xnnpack", "reason": "excluded by the plugin's options", "nodes": adds[0]["nodes"]}]:
    fail(f"Add reasons: {adds[0]['refused']}")
xnn = [p for p in t["partitions"] if p["backend"] == "xnnpack"]
if len(xnn) < 2 or t["boundary_copies"] != sum(p["inputs"] + p["outputs"] for p in xnn):
    fail(f"partitions {len(xnn)}, boundary copies {t['boundary_copies']}")
if t["fallbacks"]:
    fail(f"fallbacks: {t['fallbacks']}")
print(f"{split['model']}: {len(xnn)} xnnpack partitions, {t['boundary_copies']} boundary copies, "
      f"{adds[0]['nodes']} Adds on cpu")
