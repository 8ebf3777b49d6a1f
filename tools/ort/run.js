#!/usr/bin/env node
// Runs a model with ONNX Runtime (CPU) on DIR/input_N.pb and writes OUT/output_N.pb.
'use strict';

const fs = require('fs');
const path = require('path');
const { loadOrt, parseArgs, die, createSession } = require('./common.js');
const tp = require('./tensorproto.js');

const USAGE = `usage: node tools/ort/run.js MODEL --inputs DIR --outputs DIR [--threads N]
                   [--opt-level disabled|basic|extended|all]
Reads DIR/input_N.pb (serialized onnx.TensorProto; fed by name when the proto's name is a model
input, else by position), runs ONNX Runtime on the CPU and writes output_N.pb in the model's
output order, each named after its output.`;

async function main() {
  const args = parseArgs(process.argv.slice(2),
                         { inputs: 'str', outputs: 'str', threads: 'int', 'opt-level': 'str' }, USAGE);
  if (args.positional.length !== 1 || !args.options.inputs || !args.options.outputs) die(USAGE);
  const ort = loadOrt();
  const model = args.positional[0];
  const session = await createSession(ort, model, {
    threads: args.options.threads, optLevel: args.options['opt-level'],
  });
  const feeds = tp.readInputs(ort, session, args.options.inputs);
  const results = await session.run(feeds);
  fs.mkdirSync(args.options.outputs, { recursive: true });
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (!t || typeof t.dims === 'undefined') throw new Error(`output '${name}' is not a tensor`);
    tp.writeTensorFile(path.join(args.options.outputs, `output_${i}.pb`), name, t);
  });
}

main().catch((e) => {
  console.error(`error: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
  process.exit(1);
});
