#!/usr/bin/python3
"""Checks a `kiln profile --trace` file against the model it profiled (issue 6's done-when).

Usage: /usr/bin/python3 tests/report/check_trace.py TRACE.json MODEL.onnx --runs N
           [--profile-json PROFILE.json] [--coverage 0.05] [--subgraphs]

- Every event is a complete event ("ph": "X") with name, cat, ts, dur, pid, tid and args.
- Session events: model_loading_uri, session_initialization and N model_run events (and plan
  when the profile says the fast engine planned).
- In every measured run the "Node" events lie inside the run's span and carry ONNX Runtime's args
  (op_name, provider, input_type_shape, output_type_shape as [{"dtype": [dims]}]), and every
  executed node has one: with the reference interpreter each node of the model's main graph
  (named by the node, or by its first output when unnamed); with the fast engine (the profile
  JSON has its plan) each step of the plan, every run the same, each named after a graph node.
- The depth-0 node events of the best-covered run add up to within --coverage of its measured
  latency (a gap the profiler makes is in every run; one the OS makes, in some).
- With --subgraphs (a model with If/Loop/Scan): every run has node events inside subgraphs
  (depth > 0), each with its subgraph path in args ("/If > then_branch"), named after a node of a
  subgraph of the model, and lying inside an event of the main-graph node that holds it.
Prints one line per run and exits 1 on the first failed check.
"""
import argparse
import collections
import json
import sys

import onnx


def fail(msg):
    print(f"check_trace: FAIL: {msg}")
    sys.exit(1)


def node_name(n):
    if n.name:
        return n.name
    return next((o for o in n.output if o), n.op_type)


def check_type_shape(name, value):
    if not isinstance(value, list):
        fail(f"node '{name}': type shape list is {type(value).__name__}")
    for entry in value:
        if not (isinstance(entry, dict) and len(entry) == 1):
            fail(f"node '{name}': type shape entry {entry!r} is not {{dtype: dims}}")
        dims = next(iter(entry.values()))
        if not (isinstance(dims, list) and all(isinstance(d, int) for d in dims)):
            fail(f"node '{name}': dims {dims!r} are not a list of integers")


def subgraph_node_names(graph):
    """The names of the nodes inside graph's subgraphs, at any depth."""
    for n in graph.node:
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                for inner in g.node:
                    yield node_name(inner)
                yield from subgraph_node_names(g)


def check_subgraph_events(run, mine, top, inner_nodes):
    inner = [e for e in mine if e["args"].get("depth", 0) > 0]
    if not inner:
        fail(f"run {run}: no node events inside subgraphs")
    for e in inner:
        path = e["args"].get("subgraph", "")
        if not path:
            fail(f"run {run}: subgraph node '{e['name']}' has no subgraph path")
        if e["name"] not in inner_nodes:
            fail(f"run {run}: '{e['name']}' is no node of a subgraph")
        holder = path.split(" > ")[0]
        if not any(t["name"] == holder and t["ts"] - 1e-3 <= e["ts"] and
                   e["ts"] + e["dur"] <= t["ts"] + t["dur"] + 1e-3 for t in top):
            fail(f"run {run}: '{e['name']}' ({path}) lies outside every event of '{holder}'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--profile-json", help="kiln profile --json output of the same run")
    ap.add_argument("--coverage", type=float, default=0.05)
    ap.add_argument("--subgraphs", action="store_true", help="expect events inside subgraphs")
    args = ap.parse_args()

    with open(args.trace) as f:
        events = json.load(f)
    if not isinstance(events, list) or not events:
        fail("the trace is not a non-empty JSON array")
    for e in events:
        for key in ("name", "cat", "ph", "ts", "dur", "pid", "tid", "args"):
            if key not in e:
                fail(f"event {e.get('name')!r} has no '{key}'")
        if e["ph"] != "X":
            fail(f"event {e['name']!r} has ph {e['ph']!r}, not a complete event")
        if e["dur"] < 0:
            fail(f"event {e['name']!r} has a negative duration")

    plan_steps = None
    if args.profile_json:
        with open(args.profile_json) as f:
            plan_steps = json.load(f).get("plan", {}).get("steps")

    session = [e for e in events if e["cat"] == "Session"]
    names = [e["name"] for e in session]
    for phase in ("model_loading_uri", "session_initialization") + (("plan",) if plan_steps else ()):
        if phase not in names:
            fail(f"no Session event '{phase}' (have {sorted(set(names))})")
    runs = [e for e in session if e["name"] == "model_run"]
    if len(runs) != args.runs:
        fail(f"{len(runs)} model_run events, expected {args.runs}")

    model = onnx.load(args.model, load_external_data=False)
    graph_nodes = collections.Counter(node_name(n) for n in model.graph.node)
    inner_nodes = set(subgraph_node_names(model.graph))
    nodes = [e for e in events if e["cat"] == "Node"]
    total_run, total_nodes = 0.0, 0.0
    covered = []  # per run: its depth-0 node events' share of its latency
    first_run = None
    for i, run in enumerate(runs):
        begin, end = run["ts"], run["ts"] + run["dur"]
        mine = [e for e in nodes if e["args"].get("run") == i]
        top = [e for e in mine if e["args"].get("depth", 0) == 0]
        seen = collections.Counter(e["name"] for e in top)
        if plan_steps is None and seen != graph_nodes:
            fail(f"run {i}: node events differ from the graph's nodes: missing "
                 f"{dict(graph_nodes - seen)}, extra {dict(seen - graph_nodes)}")
        if plan_steps is not None:
            if len(top) != plan_steps:
                fail(f"run {i}: {len(top)} node events, the plan has {plan_steps} steps")
            unknown = {n for n in seen if n.removesuffix(" (reorder)") not in graph_nodes}
            if unknown:
                fail(f"run {i}: node events named after no graph node: {sorted(unknown)}")
            if first_run is not None and seen != first_run:
                fail(f"run {i}: node events differ from run 0's")
            first_run = seen
        for e in mine:
            if e["ts"] < begin - 1e-3 or e["ts"] + e["dur"] > end + 1e-3:
                fail(f"run {i}: node '{e['name']}' lies outside its run")
            a = e["args"]
            for key in ("op_name", "provider", "input_type_shape", "output_type_shape"):
                if key not in a:
                    fail(f"run {i}: node '{e['name']}' has no arg '{key}'")
            check_type_shape(e["name"], a["input_type_shape"])
            check_type_shape(e["name"], a["output_type_shape"])
        if args.subgraphs:
            check_subgraph_events(i, mine, top, inner_nodes)
        node_sum = sum(e["dur"] for e in top)
        covered.append(node_sum / run["dur"])
        total_run += run["dur"]
        total_nodes += node_sum
        print(f"run {i}: {len(mine)} node events ({len(top)} at depth 0), "
              f"nodes {node_sum / 1000:.3f} ms of {run['dur'] / 1000:.3f} ms "
              f"({100 * node_sum / run['dur']:.1f}%)")
    share = total_nodes / total_run
    print(f"all runs: node events cover {100 * share:.2f}% of the measured latency")
    # Judged on the run the node events cover best: time the profiler misses (between steps, in
    # the engine) is missed in every run, while a run the OS preempted between two events shows
    # a gap in that run only (make test on 2 busy cores: control_flow's runs 98.6, 88.0, 94.7
    # and 73.1%).
    best = max(covered)
    if abs(1 - best) > args.coverage:
        fail(f"node events sum to {100 * best:.2f}% of the best-covered run, not within "
             f"{100 * args.coverage:.0f}%")
    print("check_trace: ok")


if __name__ == "__main__":
    main()
