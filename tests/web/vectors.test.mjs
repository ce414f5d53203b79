// oasis.js against every vector of protocol/vectors/ (SPEC sections 1-4 and 15): frames decode
// to what the vectors show (or fail with the listed code), patches rebuild the new views with
// their hashes and canonical bytes, and the recorded session replays through the mirror of each
// connection with every hash matching and our encoder giving the bytes that were sent.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Mirror } from "../../clients/web/oasis.js";
import {
  CLIENT_LIMITS,
  applyPatch,
  canonical,
  decodeFrame,
  encodeFrame,
  fromHex,
  toHex,
  viewHash,
} from "../../clients/web/wire.js";
import { parseExact, same } from "./exact_json.mjs";

const VECTORS = new URL("../../protocol/vectors/", import.meta.url);
const load = (name) => parseExact(readFileSync(new URL(name, VECTORS), "utf-8"));

test("every frame vector decodes to its frame, or fails with its error code", () => {
  const vectors = load("frames.json");
  assert.ok(vectors.length >= 15);
  for (const v of vectors) {
    const bytes = fromHex(v.hex);
    if (v.valid) {
      const frame = decodeFrame(bytes, CLIENT_LIMITS);
      assert.ok(same(frame, v.frame), `${v.name}: ${JSON.stringify(frame, bigints)}`);
      assert.equal(toHex(encodeFrame(frame)), v.hex, `${v.name} encodes back to its bytes`);
    } else {
      assert.throws(() => decodeFrame(bytes, CLIENT_LIMITS), { code: v.error }, v.name);
    }
  }
});

test("every patch vector rebuilds the new view, its hash and its canonical bytes", () => {
  const vectors = load("patches.json");
  assert.ok(vectors.length >= 10);
  for (const v of vectors) {
    assert.equal(viewHash(v.old), v.old_hash, `${v.name}: old hash`);
    const rebuilt = applyPatch(v.old, v.patch);
    assert.ok(same(rebuilt, v.new), `${v.name}: ${JSON.stringify(rebuilt)}`);
    assert.equal(toHex(canonical(rebuilt)), v.new_canonical_hex, `${v.name}: canonical bytes`);
    assert.equal(viewHash(rebuilt), v.new_hash, `${v.name}: new hash`);
    assert.equal(viewHash(rebuilt, 2), v.new_hash2, `${v.name}: new hash, rule 2`);
    assert.ok(same(decodeFrame(encodeFrame({ type: "x", v: rebuilt })).v, v.new), v.name);
  }
});

test("the recorded session replays with every hash matching on every connection", () => {
  const session = load("session/session.json");
  const mirrors = new Map();
  const rules = new Map(); // each connection's view hash rule, from its welcome (SPEC 4)
  let patches = 0;
  let fullViews = 0;
  for (const entry of session) {
    const bytes = readFileSync(new URL(`session/frames/${entry.file}`, VECTORS));
    const frame = decodeFrame(bytes);
    assert.ok(same(frame, entry.frame), `frame ${entry.n} decodes to what session.json shows`);
    if (entry.direction === "sent") {
      assert.equal(toHex(encodeFrame(entry.frame)), bytes.toString("hex"), `frame ${entry.n}`);
      continue;
    }
    if (frame.type === "welcome") rules.set(entry.connection, frame.hash_rule);
    if (typeof frame.room !== "string") continue;
    const key = `${entry.connection} ${frame.room}`;
    if (!mirrors.has(key) && frame.type === "joined") {
      const mirror = new Mirror(frame.room);
      mirror.hashRule = rules.get(entry.connection);
      mirrors.set(key, mirror);
    }
    const mirror = mirrors.get(key);
    if (!mirror) continue;
    const result = mirror.onFrame(frame);
    assert.equal(result.problem, null, `frame ${entry.n}: ${result.problem}`);
    assert.equal(result.needSync, false, `frame ${entry.n} needs no sync`);
    if (frame.type === "patch") {
      patches += 1;
      assert.equal(viewHash(mirror.view, mirror.hashRule), frame.hash);
    }
    if (frame.view) fullViews += 1;
  }
  assert.ok(patches >= 30, `${patches} patches replayed`);
  assert.deepEqual([...rules.values()].sort(), [1, 1, 2], "both rules are recorded");
  assert.ok(fullViews >= 3);
  for (const [key, mirror] of mirrors) {
    assert.equal(mirror.mismatches, 0, key);
    assert.ok(mirror.over, `${key} saw the final result`);
  }
  const seat0 = [...mirrors].find(([key]) => key.startsWith("seat0 "))[1];
  assert.equal(seat0.seat, 0);
  assert.equal(typeof seat0.token, "string");
});

function bigints(_key, value) {
  return typeof value === "bigint" ? `${value}n` : value;
}
