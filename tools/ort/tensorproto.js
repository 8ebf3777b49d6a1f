// onnx.TensorProto <-> onnxruntime-node Tensor, with a small hand-written protobuf codec.
// Handles dims, data_type, name, raw_data and the typed fields (float_data, int32_data, string_data,
// int64_data, double_data, uint64_data). External data and segments are rejected.
'use strict';

const fs = require('fs');

// onnx.TensorProto.DataType -> [ORT tensor type, TypedArray, element bytes]
const DTYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2],
  5: ['int16', Int16Array, 2],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  8: ['string', Array, 0],
  9: ['bool', Uint8Array, 1],
  10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8],
  12: ['uint32', Uint32Array, 4],
  13: ['uint64', BigUint64Array, 8],
};
const ORT_TO_ONNX = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v[0], Number(k)]));

// ---- wire format reading -------------------------------------------------------------------

class Reader {
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  done() {
    return this.pos >= this.buf.length;
  }
  varintBig() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
    return BigInt.asUintN(64, result);
  }
  varint() {
    const v = this.varintBig();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('varint too large');
    return Number(v);
  }
  bytes(n) {
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0) this.varintBig();
    else if (wire === 1) this.bytes(8);
    else if (wire === 2) this.bytes(this.varint());
    else if (wire === 5) this.bytes(4);
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

// Repeated scalar field: packed (wire 2) or one element at a time.
function readRepeated(r, wire, one, fixedSize, out) {
  if (wire === 2) {
    const sub = new Reader(r.bytes(r.varint()));
    while (!sub.done()) out.push(one(sub));
  } else {
    out.push(one(r));
  }
}

const asInt64 = (r) => BigInt.asIntN(64, r.varintBig());
const asUint64 = (r) => r.varintBig();
const asInt32 = (r) => Number(BigInt.asIntN(32, r.varintBig()));
const asFloat = (r) => r.bytes(4).readFloatLE(0);
const asDouble = (r) => r.bytes(8).readDoubleLE(0);

function decodeTensorProto(buf) {
  const r = new Reader(buf);
  const t = { dims: [], dataType: 0, name: '', raw: null, floatData: [], int32Data: [], stringData: [],
              int64Data: [], doubleData: [], uint64Data: [] };
  while (!r.done()) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    switch (field) {
      case 1: readRepeated(r, wire, asInt64, 0, t.dims); break;
      case 2: t.dataType = r.varint(); break;
      case 3: throw new Error('TensorProto.segment is not supported (or the file is not a TensorProto: sequence, map and optional inputs are not supported)');
      case 4: readRepeated(r, wire, asFloat, 4, t.floatData); break;
      case 5: readRepeated(r, wire, asInt32, 0, t.int32Data); break;
      case 6: t.stringData.push(Buffer.from(r.bytes(r.varint()))); break;
      case 7: readRepeated(r, wire, asInt64, 0, t.int64Data); break;
      case 8: t.name = r.bytes(r.varint()).toString('utf8'); break;
      case 9: t.raw = Buffer.from(r.bytes(r.varint())); break;
      case 10: readRepeated(r, wire, asDouble, 8, t.doubleData); break;
      case 11: readRepeated(r, wire, asUint64, 0, t.uint64Data); break;
      case 13: throw new Error('TensorProto with external data is not supported');
      case 14: {
        const loc = r.varint();
        if (loc !== 0) throw new Error('TensorProto with external data is not supported');
        break;
      }
      default: r.skip(wire);
    }
  }
  return t;
}

// Decoded proto -> {name, tensor: ort.Tensor}
function protoToTensor(ort, t) {
  const info = DTYPES[t.dataType];
  if (!info) throw new Error(`tensor '${t.name}': unsupported data_type ${t.dataType}`);
  const [type, Ctor, size] = info;
  const dims = t.dims.map((d) => {
    if (d < 0n || d > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`tensor '${t.name}': bad dim ${d}`);
    return Number(d);
  });
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') {
    data = t.stringData.map((b) => b.toString('utf8'));
  } else if (t.raw !== null) {
    if (t.raw.length !== count * size) {
      throw new Error(`tensor '${t.name}': raw_data has ${t.raw.length} bytes, dims need ${count * size}`);
    }
    data = new Ctor(count);
    Buffer.from(data.buffer).set(t.raw);  // little-endian host assumed (x86, arm)
  } else {
    let src;
    switch (t.dataType) {
      case 1: src = t.floatData; break;
      case 11: src = t.doubleData; break;
      case 7: src = t.int64Data; break;
      case 12: case 13: src = t.uint64Data; break;
      default: src = t.int32Data;  // int8/16/32, uint8/16, bool, float16 (bits)
    }
    if (src.length !== count) {
      throw new Error(`tensor '${t.name}': ${src.length} elements, dims need ${count}`);
    }
    data = new Ctor(count);
    for (let i = 0; i < count; i++) {
      if (t.dataType === 12) data[i] = Number(src[i]);
      else if (t.dataType === 13) data[i] = BigInt.asUintN(64, src[i]);
      else data[i] = src[i];
    }
  }
  return { name: t.name, tensor: new ort.Tensor(type, data, dims) };
}

function readTensorFile(ort, path) {
  return protoToTensor(ort, decodeTensorProto(fs.readFileSync(path)));
}

// ---- wire format writing -------------------------------------------------------------------

function varintBytes(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}

function lengthDelimited(field, bytes) {
  return Buffer.concat([varintBytes(field * 8 + 2), varintBytes(bytes.length), bytes]);
}

// ort.Tensor -> serialized TensorProto (dims, data_type, name, raw_data or string_data)
function encodeTensorProto(name, tensor) {
  const dataType = ORT_TO_ONNX[tensor.type];
  if (!dataType) throw new Error(`output '${name}': unsupported tensor type ${tensor.type}`);
  const parts = [];
  if (tensor.dims.length) parts.push(lengthDelimited(1, Buffer.concat(tensor.dims.map((d) => varintBytes(d)))));
  parts.push(varintBytes(2 * 8 + 0), varintBytes(dataType));
  if (tensor.type === 'string') {
    for (const s of tensor.data) parts.push(lengthDelimited(6, Buffer.from(s, 'utf8')));
  }
  parts.push(lengthDelimited(8, Buffer.from(name, 'utf8')));
  if (tensor.type !== 'string') {
    const d = tensor.data;
    parts.push(lengthDelimited(9, Buffer.from(d.buffer, d.byteOffset, d.byteLength)));
  }
  return Buffer.concat(parts);
}

function writeTensorFile(path, name, tensor) {
  fs.writeFileSync(path, encodeTensorProto(name, tensor));
}

// input_0.pb, input_1.pb ... of a folder, in numeric order.
function listNumbered(dir, prefix) {
  const re = new RegExp(`^${prefix}_(\\d+)\\.pb$`);
  return fs.readdirSync(dir)
    .map((f) => [f, re.exec(f)])
    .filter(([, m]) => m)
    .sort((a, b) => Number(a[1][1]) - Number(b[1][1]))
    .map(([f]) => `${dir}/${f}`);
}

// Reads DIR/input_N.pb into a feeds object for session.run. A file is fed by its TensorProto
// name when that names a model input, otherwise by position.
function readInputs(ort, session, dir) {
  const files = listNumbered(dir, 'input');
  if (files.length === 0) throw new Error(`no input_N.pb files in ${dir}`);
  const feeds = {};
  files.forEach((f, i) => {
    const { name, tensor } = readTensorFile(ort, f);
    let key = name;
    if (!session.inputNames.includes(key)) {
      if (i >= session.inputNames.length) throw new Error(`${f}: the model has only ${session.inputNames.length} inputs`);
      key = session.inputNames[i];
    }
    feeds[key] = tensor;
  });
  return feeds;
}

module.exports = { decodeTensorProto, encodeTensorProto, protoToTensor, readTensorFile, writeTensorFile,
                   readInputs, listNumbered, DTYPES };
