#!/usr/bin/env node
// Times ONNX Runtime (CPU) on one model: p50 / mean / min milliseconds per run.
'use strict';

const { loadOrt, parseArgs, die, createSession } = require('./common.js');
const fs = require('fs');
const path = require('path');
const tp = require('./tensorproto.js');
const stream = require('./stream.js');

const USAGE = `usage: node tools/ort/bench.js MODEL --inputs DIR [--threads N] [--iterations N] [--warmup N]
                     [--opt-level disabled|basic|extended|all] [--optimized-out PATH] [--json]
                     [--profile DIR]
       node tools/ort/bench.js MODEL --vary NAME=LO..HI [--seed N] [--dim NAME=V,...] [--threads N]
                     [--iterations N] [--warmup N] [--json]
Times session creation (load_ms) and session.run on DIR/input_N.pb (defaults: ORT's thread count,
20 iterations, 3 warmup runs, optimization level 'all'); peak_rss_mb is the process's peak RSS. --optimized-out PATH also saves the graph
as ONNX Runtime optimizes it at level 'basic' (the provider-independent rewrites: constant
folding, redundant node removal, simple fusions) to PATH; with --iterations 0 it only does that.
--profile DIR runs with ONNX Runtime's profiler (its JSON file lands in DIR) and adds "nodes": per
node of the graph ORT ran, its op and the median of its kernel times over the timed runs, in ms.
--vary times a stream instead: the symbolic dim NAME drawn anew for every run (warmup runs first)
as kiln bench --vary draws it (the same seed gives the same dims), on random inputs (stream.js);
p50/p90/p99 by nearest rank as kiln prints them, and "stream": [value, ms] per timed run.`;

function percentile(sorted, p) {
  const k = (sorted.length - 1) * p;
  const lo = Math.floor(k);
  const hi = Math.ceil(k);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (k - lo);
}

// Per node, the median kernel time of the last `iterations` runs (the warmup runs come first in
// the profile): ORT's "Node" events named NODE_kernel_time, durations in microseconds.
async function nodeTimes(session, dir, iterations) {
  const before = new Set(fs.readdirSync(dir));
  await session.endProfiling();
  const file = fs.readdirSync(dir).find((f) => f.startsWith('ort_profile') && !before.has(f)) ??
               fs.readdirSync(dir).filter((f) => f.startsWith('ort_profile')).sort().pop();
  if (!file) die(`--profile: ONNX Runtime wrote no profile into ${dir}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!byNode.has(name)) byNode.set(name, { op: e.args && e.args.op_name, durs: [] });
    byNode.get(name).durs.push(e.dur);
  }
  const nodes = {};
  for (const [name, { op, durs }] of byNode) {
    const sorted = durs.slice(-iterations).sort((a, b) => a - b);
    nodes[name] = { op, ms: percentile(sorted, 0.5) / 1e3 };
  }
  return nodes;
}

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    inputs: 'str', threads: 'int', iterations: 'int', warmup: 'int', json: 'flag',
    'optimized-out': 'str', 'opt-level': 'str', profile: 'str', vary: 'str', seed: 'int', dim: 'str',
  }, USAGE);
  if (args.positional.length !== 1) die(USAGE);
  const o = args.options;
  const model = args.positional[0];
  const iterations = o.iterations ?? 20;
  const warmup = o.warmup ?? 3;
  const ort = loadOrt();

  if (o['optimized-out']) {
    const s = await createSession(ort, model, { threads: o.threads, optLevel: 'basic',
                                                optimizedOut: o['optimized-out'] });
    await s.release();
  }
  if (iterations === 0) {
    if (o.json) console.log(JSON.stringify({ model, optimized_out: o['optimized-out'] ?? null }));
    return;
  }
  if (o.vary !== undefined) return benchStream(ort, model, o, iterations, warmup);
  if (!o.inputs) die(`--inputs DIR is needed to time runs\n${USAGE}`);

  const t_load = process.hrtime.bigint();
  const profilePrefix = o.profile ? path.join(o.profile, 'ort_profile') : undefined;
  const session = await createSession(ort, model, { threads: o.threads, optLevel: o['opt-level'],
                                                    profilePrefix });
  const load_ms = Number(process.hrtime.bigint() - t_load) / 1e6;
  const feeds = tp.readInputs(ort, session, o.inputs);
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const result = {
    model,
    runtime: `onnxruntime-node ${ort.env.versions.node}`,
    threads: o.threads ?? null,
    iterations,
    warmup,
    load_ms,
    p50_ms: percentile(sorted, 0.5),
    mean_ms: times.reduce((a, b) => a + b, 0) / times.length,
    min_ms: sorted[0],
    max_ms: sorted[sorted.length - 1],
    // The process's peak resident set (getrusage's ru_maxrss, as `kiln bench --json` reports it):
    // node and onnxruntime-node's own share is measured apart (bench/run.sh: a trivial model).
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  };
  if (o['optimized-out']) result.optimized_out = o['optimized-out'];
  if (profilePrefix) result.nodes = await nodeTimes(session, o.profile, iterations);
  if (o.json) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`${model}: p50 ${result.p50_ms.toFixed(3)} ms, mean ${result.mean_ms.toFixed(3)} ms, ` +
                `min ${result.min_ms.toFixed(3)} ms (${iterations} runs, ${warmup} warmup, ` +
                `threads ${o.threads ?? 'default'})`);
  }
}

// The dims of --dim NAME=V[,NAME=V...] as an object.
function parseDims(spec) {
  const dims = {};
  for (const part of (spec ?? '').split(',').filter((p) => p !== '')) {
    const m = /^([^=]+)=(\d{1,15})$/.exec(part);
    if (!m) die(`--dim '${part}': expected NAME=VALUE`);
    dims[m[1]] = Number(m[2]);
  }
  return dims;
}

async function benchStream(ort, model, o, iterations, warmup) {
  const range = stream.parseVary(o.vary);
  if (!range) die(`--vary '${o.vary}': expected NAME=LO..HI with 1 <= LO <= HI (e.g. seq=1..512)`);
  if (o.inputs) die('--vary makes its own random inputs: it takes no --inputs');
  const dims = parseDims(o.dim);
  if (range.name in dims) die(`--vary ${o.vary}: --dim sets '${range.name}' too; give one of them`);
  const seed = o.seed ?? 0;
  const t_load = process.hrtime.bigint();
  const session = await createSession(ort, model, { threads: o.threads, optLevel: o['opt-level'] });
  const load_ms = Number(process.hrtime.bigint() - t_load) / 1e6;
  const names = stream.symbolicDims(session);
  if (!names.includes(range.name))
    die(`--vary ${range.name}=${range.lo}..${range.hi}: no input has a dim '${range.name}'; ` +
        `the model's symbolic dims: ${names.join(', ') || 'none'}`);
  const values = stream.drawStream(range, seed, warmup + iterations);
  const runs = [];
  for (let i = 0; i < values.length; i++) {
    const feeds = stream.makeFeeds(ort, session, { ...dims, [range.name]: values[i] }, seed + i);
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (i >= warmup) runs.push([values[i], ms]);
  }
  const sorted = runs.map((r) => r[1]).sort((a, b) => a - b);
  const rank = (q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
  const result = {
    model, runtime: `onnxruntime-node ${ort.env.versions.node}`, threads: o.threads ?? null,
    vary: `${range.name}=${range.lo}..${range.hi}`, seed, iterations, warmup, load_ms,
    p50_ms: rank(0.5), p90_ms: rank(0.9), p99_ms: rank(0.99), max_ms: sorted[sorted.length - 1],
    mean_ms: sorted.reduce((a, b) => a + b, 0) / sorted.length, min_ms: sorted[0], stream: runs,
  };
  if (o.json) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`${model}, ${result.vary} (seed ${seed}): p50 ${result.p50_ms.toFixed(3)} ms, ` +
                `p99 ${result.p99_ms.toFixed(3)} ms, max ${result.max_ms.toFixed(3)} ms, ` +
                `mean ${result.mean_ms.toFixed(3)} ms (${iterations} runs, ${warmup} warmup, ` +
                `threads ${o.threads ?? 'default'})`);
  }
}

main().catch((e) => {
  console.error(`error: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
  process.exit(1);
});
