// bench.js --vary NAME=LO..HI: the stream kiln bench --vary runs (src/cli/vary_stream.h), drawn
// the same way (splitmix64 from the seed, LO + x mod (HI-LO+1)), so both runtimes see the same
// dims in the same order. The values are ONNX Runtime's own random ones: floats uniform in
// [-1, 1), integer inputs named like a mask all 1, other integers 0 or 1 (valid token ids and
// token types for any vocabulary); kiln picks its integers from what the graph indexes, which
// changes no timing of a model whose work does not depend on the values (BERT's does not).
'use strict';

const MASK64 = (1n << 64n) - 1n;

function splitmix64(stateRef) {
  stateRef.s = (stateRef.s + 0x9E3779B97F4A7C15n) & MASK64;
  let z = stateRef.s;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  return z ^ (z >> 31n);
}

// "seq=1..512" -> {name, lo, hi}; null when malformed or 1 <= LO <= HI does not hold.
function parseVary(spec) {
  const m = /^([^=]+)=(\d{1,15})\.\.(\d{1,15})$/.exec(spec);
  if (!m) return null;
  const lo = Number(m[2]);
  const hi = Number(m[3]);
  if (lo < 1 || lo > hi) return null;
  return { name: m[1], lo, hi };
}

function drawStream(range, seed, n) {
  const state = { s: BigInt.asUintN(64, BigInt(seed)) };
  const span = BigInt(range.hi - range.lo + 1);
  const out = [];
  for (let i = 0; i < n; i++) out.push(range.lo + Number(splitmix64(state) % span));
  return out;
}

// The symbolic dim names of the session's inputs, in order of first appearance.
function symbolicDims(session) {
  const names = [];
  for (const m of session.inputMetadata)
    for (const d of m.shape ?? [])
      if (typeof d === 'string' && d !== '' && !names.includes(d)) names.push(d);
  return names;
}

const INT_TYPES = new Set(['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64']);
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

// Feeds for one run: every input at `dims` (symbolic name -> value; other open dims 1).
function makeFeeds(ort, session, dims, seed) {
  const state = { s: BigInt.asUintN(64, BigInt(seed)) };
  const unit = () => Number(splitmix64(state) >> 11n) / 2 ** 53;
  const feeds = {};
  for (const m of session.inputMetadata) {
    const shape = (m.shape ?? []).map((d) => (typeof d === 'number' && d >= 0 ? d : dims[d] ?? 1));
    const n = shape.reduce((a, b) => a * b, 1);
    const Array_ = ARRAYS[m.type];
    if (!Array_) throw new Error(`--vary: input '${m.name}' has type ${m.type}, which bench.js cannot make up`);
    const data = new Array_(n);
    const mask = /mask/i.test(m.name);
    for (let i = 0; i < n; i++) {
      if (INT_TYPES.has(m.type) || m.type === 'bool') {
        const v = mask ? 1 : Math.floor(unit() * 2);
        data[i] = m.type.endsWith('64') ? BigInt(v) : v;
      } else {
        data[i] = unit() * 2 - 1;
      }
    }
    feeds[m.name] = new ort.Tensor(m.type, data, shape);
  }
  return feeds;
}

module.exports = { parseVary, drawStream, symbolicDims, makeFeeds };
