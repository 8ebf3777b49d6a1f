// Shared bits of run.js and bench.js: argument parsing and session creation.
'use strict';

function loadOrt() {
  // Also run models stamped with an opset ONNX has not released yet (the vendored backend tests
  // carry some); ORT refuses them unless this is 0. Read by the native library at model load.
  if (process.env.ALLOW_RELEASED_ONNX_OPSET_ONLY === undefined) process.env.ALLOW_RELEASED_ONNX_OPSET_ONLY = '0';
  try {
    return require('onnxruntime-node');
  } catch (e) {
    console.error(`error: cannot load onnxruntime-node (${e.message.split('\n')[0]}); ` +
                  'install it with: ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix tools/ort');
    process.exit(2);
  }
}

// Parses argv into {positional: [...], options: {name: value}}. `flags` lists options without a value.
function parseArgs(argv, spec, usage) {
  const out = { positional: [], options: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      console.log(usage);
      process.exit(0);
    }
    if (a.startsWith('--')) {
      let [name, value] = a.slice(2).split(/=(.*)/s);
      if (!(name in spec)) die(`unknown option --${name}\n${usage}`);
      if (spec[name] === 'flag') {
        out.options[name] = true;
        continue;
      }
      if (value === undefined) {
        if (i + 1 >= argv.length) die(`--${name} needs a value\n${usage}`);
        value = argv[++i];
      }
      if (spec[name] === 'int') {
        if (!/^\d+$/.test(value)) die(`--${name} needs a non-negative integer, got '${value}'`);
        value = Number(value);
      }
      out.options[name] = value;
    } else {
      out.positional.push(a);
    }
  }
  return out;
}

function die(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

async function createSession(ort, model, { threads, optLevel, optimizedOut, profilePrefix } = {}) {
  const options = {
    executionProviders: ['cpu'],
    executionMode: 'sequential',
    interOpNumThreads: 1,
    logSeverityLevel: 4,  // errors come back as exceptions and are printed once, by the caller
  };
  if (threads) options.intraOpNumThreads = threads;
  if (optLevel) options.graphOptimizationLevel = optLevel;
  if (optimizedOut) options.optimizedModelFilePath = optimizedOut;
  if (profilePrefix) {
    options.enableProfiling = true;
    options.profileFilePrefix = profilePrefix;
  }
  return ort.InferenceSession.create(model, options);
}

module.exports = { loadOrt, parseArgs, die, createSession };
