// The wire rules of SPEC sections 1-4 for JavaScript: frame codec with its checks, the canonical
// encoding and the view hash, and JSON Patch. Pure functions over the vendored libraries; no I/O.
//
// Numbers. JavaScript has one number type, msgpack two, and the view hash (SPEC 4) tells them
// apart: 300 hashes as an integer, 300.0 as a float 64. So a float whose value is a whole number
// decodes as a `Float` (a tiny wrapper: `+x`, arithmetic, templates and JSON.stringify see its
// number) and encodes back as a float 64; every other float is a plain number, which is
// unambiguous (it has a fraction). Integers beyond +-2^53 decode as BigInt and encode as 64-bit
// integers. Everything else is plain data: objects with string keys, arrays, strings, booleans,
// null.

import { Decoder, Encoder } from "./vendor/msgpack/index.mjs";
import { blake2b } from "./vendor/noble-hashes/blake2.js";
import { immutableJSONPatch } from "./vendor/immutable-json-patch/index.js";

/** A float whose value is a whole number (SPEC 4 hashes it as float 64, not as an integer). */
export class Float {
  constructor(value) {
    this.value = Number(value);
    Object.freeze(this);
  }
  valueOf() {
    return this.value;
  }
  toJSON() {
    return this.value;
  }
  toString() {
    return Number.isInteger(this.value) ? this.value.toFixed(1) : String(this.value);
  }
}

/** A frame that breaks SPEC sections 1-2; `code` is the server's error code for it. */
export class FrameError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "FrameError";
    this.code = code;
  }
}

/** SPEC 1's limits on frames a client sends (the server announces its own in welcome). */
export const CLIENT_LIMITS = Object.freeze({
  max_frame_bytes: 65536,
  max_depth: 16,
  max_container: 1024,
  max_str: 16384,
});

/** What a client accepts from the server: full views are large, the types are still checked. */
export const SERVER_LIMITS = Object.freeze({
  max_frame_bytes: 1 << 28,
  max_depth: 64,
  max_container: 1 << 20,
  max_str: 1 << 24,
});

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

function stringKey(key) {
  if (typeof key !== "string") throw new FrameError("bad_type", "map keys must be strings");
  return key;
}

// The decoder of @msgpack/msgpack with the protocol's rules (its methods below are the ones
// its Decoder calls for each msgpack type; vendor.sh pins the version they were written for).
class ProtocolDecoder extends Decoder {
  constructor(limits) {
    super({ mapKeyConverter: stringKey, useBigInt64: false });
    this.limits = limits;
  }
  readF32() {
    const value = super.readF32();
    return Number.isInteger(value) ? new Float(value) : value;
  }
  readF64() {
    const value = super.readF64();
    return Number.isInteger(value) ? new Float(value) : value;
  }
  readU64() {
    const value = this.view.getBigUint64(this.pos);
    this.pos += 8;
    return value <= SAFE ? Number(value) : value;
  }
  readI64() {
    const value = this.view.getBigInt64(this.pos);
    this.pos += 8;
    return value <= SAFE && value >= -SAFE ? Number(value) : value;
  }
  pushArrayState(size) {
    this.checkContainer(size);
    super.pushArrayState(size);
  }
  pushMapState(size) {
    this.checkContainer(size);
    super.pushMapState(size);
  }
  checkContainer(size) {
    if (size > this.limits.max_container) {
      throw new FrameError("container_too_large", `a container of ${size} elements`);
    }
    // The frame map is depth 1; a container pushed now sits one level below the open ones.
    if (this.stack.length + 1 > this.limits.max_depth) {
      throw new FrameError("too_deep", `nesting deeper than ${this.limits.max_depth}`);
    }
  }
  decodeUtf8String(byteLength, headerOffset) {
    if (byteLength > this.limits.max_str) {
      throw new FrameError("container_too_large", `a string of ${byteLength} bytes`);
    }
    const start = this.pos + headerOffset;
    if (this.bytes.byteLength < start + byteLength) throw new RangeError("Insufficient data");
    const bytes = this.bytes.subarray(start, start + byteLength);
    if (bytes.every((b) => b < 0x80)) return super.decodeUtf8String(byteLength, headerOffset);
    const text = STRICT_UTF8.decode(bytes); // throws TypeError on invalid UTF-8
    this.pos = start + byteLength;
    return text;
  }
  decodeBinary() {
    throw new FrameError("bad_type", "bin values are not allowed");
  }
  decodeExtension() {
    throw new FrameError("bad_type", "ext values are not allowed");
  }
}

/**
 * One frame's bytes to its map, or a FrameError with the code of SPEC section 5.
 * `limits` defaults to what a client accepts from a server.
 */
export function decodeFrame(data, limits = SERVER_LIMITS) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (bytes.byteLength > limits.max_frame_bytes) {
    throw new FrameError("frame_too_large", `a frame of ${bytes.byteLength} bytes`);
  }
  let value;
  try {
    value = new ProtocolDecoder(limits).decode(bytes);
  } catch (err) {
    if (err instanceof FrameError) throw err;
    throw new FrameError("malformed_frame", `not one msgpack value (${err.message})`);
  }
  if (!isMap(value) || typeof value.type !== "string" || value.type === "") {
    throw new FrameError("bad_envelope", "a frame is a map with a string type");
  }
  return value;
}

function isMap(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Float);
}

/** UTF-8 byte order of two strings (SPEC 4 sorts map keys so), without encoding them. */
export function utf8Order(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // A surrogate stands for a code point above U+FFFF: after every other unit in UTF-8.
      const sx = x >= 0xd800 && x <= 0xdfff;
      const sy = y >= 0xd800 && y <= 0xdfff;
      if (sx !== sy) return sx ? 1 : -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

// The encoder of @msgpack/msgpack with SPEC 4's canonical form: keys in UTF-8 order, integers
// in their smallest form (the library's), floats as float 64, Float and BigInt as above.
class ProtocolEncoder extends Encoder {
  constructor(canonical) {
    super({ forceFloat32: false, useBigInt64: false, ignoreUndefined: false, maxDepth: 512 });
    this.canonical = canonical;
  }
  encodeObject(object, depth) {
    if (object instanceof Float) {
      this.ensureBufferSizeToWrite(9);
      this.writeU8(0xcb);
      this.writeF64(object.value);
    } else if (typeof object === "bigint") {
      this.ensureBufferSizeToWrite(9);
      if (object >= 0n) {
        if (object > 0xffffffffffffffffn) throw new RangeError("an integer over 64 bits");
        this.writeU8(0xcf);
        this.view.setBigUint64(this.pos, object);
      } else {
        if (object < -0x8000000000000000n) throw new RangeError("an integer over 64 bits");
        this.writeU8(0xd3);
        this.view.setBigInt64(this.pos, object);
      }
      this.pos += 8;
    } else if (ArrayBuffer.isView(object)) {
      throw new TypeError("binary values are not part of the protocol");
    } else {
      super.encodeObject(object, depth);
    }
  }
  encodeNumber(object) {
    if (typeof object === "number" && Number.isSafeInteger(object) && !Object.is(object, -0)) {
      super.encodeNumber(object);
    } else {
      this.ensureBufferSizeToWrite(9);
      this.writeU8(0xcb);
      this.writeF64(object);
    }
  }
  encodeMap(object, depth) {
    const keys = Object.keys(object).filter((k) => object[k] !== undefined);
    if (this.canonical) keys.sort(utf8Order);
    const size = keys.length;
    if (size < 16) {
      this.writeU8(0x80 + size);
    } else if (size < 0x10000) {
      this.writeU8(0xde);
      this.writeU16(size);
    } else {
      this.writeU8(0xdf);
      this.writeU32(size);
    }
    for (const key of keys) {
      this.encodeString(key);
      this.doEncode(object[key], depth + 1);
    }
  }
}

const FRAME_ENCODER = new ProtocolEncoder(false);
const CANONICAL_ENCODER = new ProtocolEncoder(true);

/** A frame map to its bytes (keys in the object's order; undefined fields are left out). */
export function encodeFrame(frame) {
  return FRAME_ENCODER.encode(frame);
}

/** SPEC 4's canonical msgpack of any protocol value. */
export function canonical(value) {
  return CANONICAL_ENCODER.encode(value);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes) {
  let out = "";
  for (const b of bytes) out += HEX[b];
  return out;
}

export function fromHex(text) {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/**
 * SPEC 4, rule 1: hex(BLAKE2b-64(canonical msgpack(view))), 16 lowercase hex digits. Rule 2
 * (asked for in `hello`): a seat's view (`own` not nil) hashes the 8 raw bytes of the rule 1
 * hash of the view with `own` nil (the spectators' view), then the canonical bytes of `own`.
 */
export function viewHash(view, rule = 1) {
  const own = view && typeof view === "object" ? view.own : null;
  if (rule !== 2 || own === null || own === undefined) {
    return toHex(blake2b(canonical(view), { dkLen: 8 }));
  }
  const spectators = blake2b(canonical({ ...view, own: null }), { dkLen: 8 });
  const mine = canonical(own);
  const chained = new Uint8Array(spectators.length + mine.length);
  chained.set(spectators);
  chained.set(mine, spectators.length);
  return toHex(blake2b(chained, { dkLen: 8 }));
}

/** A JSON Patch in the protocol's sense of SPEC 3. */
export class PatchError extends Error {
  constructor(message) {
    super(message);
    this.name = "PatchError";
  }
}

/**
 * RFC 6902 `ops` applied in order to `doc`; a new document that shares what did not change
 * (the old one is left as it was, so a frontend may keep it). A path that names nothing
 * raises PatchError (the library alone would skip a `replace` of a missing member).
 */
export function applyPatch(doc, ops) {
  if (!Array.isArray(ops)) throw new PatchError("ops is not a list");
  try {
    return immutableJSONPatch(doc, ops, { before: checkTarget });
  } catch (err) {
    if (err instanceof PatchError) throw err;
    throw new PatchError(err.message);
  }
}

function checkTarget(doc, op) {
  if (op === null || typeof op !== "object" || typeof op.path !== "string") {
    throw new PatchError("an operation without a path");
  }
  if (op.op === "add") {
    if (!exists(doc, parent(op.path))) throw new PatchError(`no parent for ${op.path}`);
  } else if (op.op === "remove" || op.op === "replace" || op.op === "test") {
    if (!exists(doc, op.path)) throw new PatchError(`nothing at ${op.path}`);
  }
  if ((op.op === "move" || op.op === "copy") && !exists(doc, op.from)) {
    throw new PatchError(`nothing at ${op.from}`);
  }
  return undefined;
}

function parent(path) {
  return path.slice(0, path.lastIndexOf("/"));
}

/** RFC 6901: does `pointer` name a value of `doc`? */
export function exists(doc, pointer) {
  if (typeof pointer !== "string") return false;
  if (pointer === "") return true;
  if (!pointer.startsWith("/")) return false;
  let node = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node)) {
      if (key === "-") return false;
      if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= node.length) return false;
      node = node[Number(key)];
    } else if (isMap(node) && Object.hasOwn(node, key)) {
      node = node[key];
    } else {
      return false;
    }
  }
  return true;
}
