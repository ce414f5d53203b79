// JSON as the vectors mean it: `1.0` is a float and 9223372036854775807 an exact integer, which
// JSON.parse cannot tell (it gives 1 and a rounded number). Strings and structure go through
// JSON.parse; only number literals are read here: a literal with a fraction or an exponent is a
// float (a Float when its value is whole), an integer beyond 2^53 a BigInt.

import { Float } from "../../clients/web/wire.js";

const TOKEN = /\s*(?:("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null)|([[\]{}:,]))/y;

export function parseExact(text) {
  TOKEN.lastIndex = 0;
  const next = () => {
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new SyntaxError(`bad JSON at ${start}`);
    return m;
  };
  const value = (m) => {
    if (m[1] !== undefined) return JSON.parse(m[1]);
    if (m[2] !== undefined) return number(m[2]);
    if (m[3] !== undefined) return JSON.parse(m[3]);
    if (m[4] === "[") {
      const out = [];
      let t = next();
      if (t[4] === "]") return out;
      for (;;) {
        out.push(value(t));
        t = next();
        if (t[4] === "]") return out;
        if (t[4] !== ",") throw new SyntaxError("expected , or ]");
        t = next();
      }
    }
    if (m[4] === "{") {
      const out = {};
      let t = next();
      if (t[4] === "}") return out;
      for (;;) {
        const key = JSON.parse(t[1]);
        if (next()[4] !== ":") throw new SyntaxError("expected :");
        out[key] = value(next());
        t = next();
        if (t[4] === "}") return out;
        if (t[4] !== ",") throw new SyntaxError("expected , or }");
        t = next();
      }
    }
    throw new SyntaxError(`unexpected ${m[0]}`);
  };
  const result = value(next());
  if (text.slice(TOKEN.lastIndex).trim() !== "") throw new SyntaxError("trailing text");
  return result;
}

function number(literal) {
  if (/[.eE]/.test(literal)) {
    const x = Number(literal);
    return Number.isInteger(x) ? new Float(x) : x;
  }
  const n = BigInt(literal);
  return n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER) ? n : Number(n);
}

/** Deep equality that tells a Float from a number and compares BigInts by value. */
export function same(a, b) {
  if (a instanceof Float || b instanceof Float) {
    return a instanceof Float && b instanceof Float && Object.is(a.value, b.value);
  }
  if (typeof a !== typeof b) return false;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (a !== null && typeof a === "object") {
    if (b === null || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
  }
  return Object.is(a, b);
}
