// The Session shell of oasis.js over an in-memory WebSocket (a fake server that speaks real
// msgpack frames): request ids and promises, typed errors, seat tokens kept per room, resume
// from the last revision after a drop, redirect following, and the pacer. The real server and
// a real browser are in tests/web/test_pages.py.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ConnectionLost, Pacer, SeatStore, ServerError, Session } from "../../clients/web/oasis.js";
import { decodeFrame, encodeFrame, viewHash } from "../../clients/web/wire.js";

const VIEW = { shared: { game: { n: 0 }, turn: { seat: 0, decision: "go" }, result: null }, own: { seat: 0, private: {}, choices: [{ kind: "go" }] } };

/** A fake server: `answer(frame, socket)` returns the frames to send back. */
function fakeServer(answer) {
  const sockets = [];
  class FakeSocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      sockets.push(this);
      setTimeout(() => {
        this.readyState = 1;
        this.onopen?.();
      }, 0);
    }
    send(bytes) {
      const frame = decodeFrame(bytes);
      this.sent.push(frame);
      for (const reply of answer(frame, this) ?? []) this.push(reply);
    }
    push(frame) {
      setTimeout(() => this.readyState === 1 && this.onmessage?.({ data: encodeFrame(frame).slice().buffer }), 0);
    }
    close(code = 1000) {
      if (this.readyState === 3) return;
      this.readyState = 3;
      setTimeout(() => this.onclose?.({ code, reason: "" }), 0);
    }
  }
  return { FakeSocket, sockets };
}

function memoryStorage() {
  const data = new Map();
  return { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k) };
}

const welcome = (id) => ({ type: "welcome", id, session: "s", version: 1, server: "fake", limits: { rate_per_second: 1000, rate_burst: 1000, idle_timeout: 300 }, games: ["tiny"] });
const info = { room: "r1", game: "tiny", players: 2, state: "playing", seats: [] };

test("requests resolve with their answer and reject with typed errors", async () => {
  const { FakeSocket } = fakeServer((f) => {
    if (f.type === "hello") return [welcome(f.id)];
    if (f.type === "ping") return [{ type: "pong", id: f.id, ts: 1.5 }];
    if (f.type === "sync") return [{ type: "error", id: f.id, code: "not_found", message: "no such room" }];
    return [];
  });
  const session = await new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(memoryStorage()) }).open();
  assert.deepEqual(session.games, ["tiny"]);
  assert.equal((await session.request({ type: "ping" })).ts, 1.5);
  await assert.rejects(session.request({ type: "sync", room: "x" }), (err) => err instanceof ServerError && err.code === "not_found");
  const pending = session.request({ type: "list_rooms" });
  session.close();
  await assert.rejects(pending, ConnectionLost);
});

test("a seat token is kept, and a dropped connection resumes the seat from its revision", async () => {
  const joins = [];
  const { FakeSocket, sockets } = fakeServer((f) => {
    if (f.type === "hello") return [welcome(f.id)];
    if (f.type === "join") {
      joins.push(f);
      if (f.token && f.rev !== undefined) return [{ type: "joined", id: f.id, room: "r1", seat: 0, rev: f.rev, view: null, hash: null, info, chat: [] }];
      if (f.token) return [{ type: "joined", id: f.id, room: "r1", seat: 0, rev: 3, view: VIEW, hash: viewHash(VIEW), info, chat: [] }];
      return [{ type: "joined", id: f.id, room: "r1", seat: 0, token: "secret", rev: 3, view: VIEW, hash: viewHash(VIEW), info, chat: [] }];
    }
    return [];
  });
  const storage = memoryStorage();
  const session = await new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(storage), reconnectDelays: [1] }).open();
  const room = await session.join("r1", { name: "ann" });
  assert.equal(room.rev, 3);
  assert.equal(JSON.parse(storage.getItem("oasis:seat:r1")).token, "secret");
  assert.equal(room.mismatches, 0);
  const resumed = new Promise((resolve) => session.addEventListener("status", (e) => e.detail.state === "open" && resolve()));
  sockets[0].close(1006);
  await resumed;
  assert.equal(sockets.length, 2);
  assert.match(sockets[1].url, /\?room=r1$/);
  assert.deepEqual(joins.at(-1), { type: "join", room: "r1", token: "secret", rev: 3, id: joins.at(-1).id });
  session.close();

  // A new page (a reload) holds no view but the stored token: it resumes the same seat.
  const again = await new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(storage) }).open();
  const back = await again.join("r1", { name: "someone else" });
  assert.equal(back.seat, 0);
  assert.deepEqual(joins.at(-1), { type: "join", room: "r1", token: "secret", id: joins.at(-1).id });
  assert.equal(back.mirror.token, "secret");
  again.close();
});

test("a redirect answer moves the session to the node it names and sends the request again", async () => {
  const { FakeSocket, sockets } = fakeServer((f, socket) => {
    if (f.type === "hello") return [welcome(f.id)];
    if (f.type === "spectate" && socket.url.startsWith("ws://one/")) {
      return [{ type: "redirect", id: f.id, room: "r1", url: "ws://two/", reason: "elsewhere" }];
    }
    if (f.type === "spectate") return [{ type: "joined", id: f.id, room: "r1", seat: null, rev: 0, view: VIEW, hash: viewHash(VIEW), info, chat: [] }];
    return [];
  });
  const session = await new Session("ws://one/", { WebSocket: FakeSocket, seats: new SeatStore(memoryStorage()) }).open();
  const room = await session.spectate("r1");
  assert.equal(room.spectator, true);
  assert.equal(session.url, "ws://two/");
  assert.match(sockets.at(-1).url, /^ws:\/\/two\/\?room=r1$/);
  session.close();
});

test("the pacer lets a burst go, then spaces frames under the server's rate", () => {
  let now = 0;
  const pacer = new Pacer(10, 10, () => now);
  const delays = Array.from({ length: 12 }, () => pacer.delay());
  assert.deepEqual(delays.slice(0, 9), Array(9).fill(0));
  assert.ok(delays[9] > 0 && delays[11] > delays[10]);
  now += 10_000;
  assert.equal(pacer.delay(), 0);
});

test("listRoomsPage sends the filters and the cursor, and returns the page with its next", async () => {
  const asked = [];
  const rooms = ["a", "b", "c"].map((room) => ({ ...info, room }));
  const { FakeSocket } = fakeServer((f) => {
    if (f.type === "hello") return [welcome(f.id)];
    if (f.type === "list_rooms") {
      asked.push(f);
      if (!f.after) return [{ type: "rooms", id: f.id, rooms: rooms.slice(0, 2), next: "1.5/b" }];
      return [{ type: "rooms", id: f.id, rooms: rooms.slice(2) }];
    }
    return [];
  });
  const session = await new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(memoryStorage()) }).open();
  const first = await session.listRoomsPage({ game: "tiny", state: "open", free: true, limit: 2 });
  assert.deepEqual(first.rooms.map((r) => r.room), ["a", "b"]);
  assert.equal(first.next, "1.5/b");
  const second = await session.listRoomsPage({ game: "tiny", after: first.next });
  assert.deepEqual(second, { rooms: [rooms[2]], next: null });
  assert.deepEqual((await session.listRooms()).map((r) => r.room), ["a", "b"]);
  const strip = ({ id, ...rest }) => rest;
  assert.deepEqual(asked.map(strip), [
    { type: "list_rooms", game: "tiny", state: "open", free: true, limit: 2 },
    { type: "list_rooms", game: "tiny", after: "1.5/b" },
    { type: "list_rooms" },
  ]);
  session.close();
});

test("undo is offered while own.undo says so and sends the room's rev (SPEC section 24)", async () => {
  const undoable = { ...VIEW, own: { ...VIEW.own, undo: true } };
  const { FakeSocket, sockets } = fakeServer((f) => {
    if (f.type === "hello") return [welcome(f.id)];
    if (f.type === "join") return [{ type: "joined", id: f.id, room: "r1", seat: 0, token: "t", rev: 5, view: undoable, hash: viewHash(undoable), info, chat: [] }];
    if (f.type === "undo") return [{ type: "ack", id: f.id, room: "r1", rev: 6 }];
    return [];
  });
  const session = await new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(memoryStorage()) }).open();
  const room = await session.join("r1", { name: "ann" });
  assert.equal(room.canUndo, true);
  const ack = await room.undo();
  assert.equal(ack.rev, 6);
  const sent = sockets[0].sent.filter((f) => f.type === "undo");
  assert.deepEqual(sent, [{ type: "undo", room: "r1", rev: 5, id: sent[0].id }]);
  session.close();
});

test("the session asks for the view hash's rule 2 and its rooms check what welcome confirmed (SPEC 4)", async () => {
  for (const [said, rule] of [[2, 2], [undefined, 1], [1, 1]]) {
    const { FakeSocket, sockets } = fakeServer((f) => {
      if (f.type === "hello") return [{ ...welcome(f.id), ...(said === undefined ? {} : { hash_rule: said }) }];
      if (f.type === "join") {
        return [{ type: "joined", id: f.id, room: "r1", seat: 0, token: "t", rev: 3, view: VIEW, hash: viewHash(VIEW, rule), info, chat: [] }];
      }
      return [];
    });
    const session = await new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(memoryStorage()) }).open();
    assert.equal(sockets[0].sent[0].hash_rule, 2, "hello asks for rule 2");
    const room = await session.join("r1", { name: "ann" });
    assert.equal(room.mirror.hashRule, rule, `welcome said ${said}`);
    assert.equal(room.mismatches, 0, `the full view hashed under rule ${rule} checks`);
    // A patch hashed under the other rule is a mismatch.
    const next = { ...VIEW, shared: { ...VIEW.shared, game: { n: 1 } } };
    const wrong = viewHash(next, 3 - rule);
    assert.notEqual(wrong, viewHash(next, rule));
    room.mirror.onFrame({ type: "patch", room: "r1", rev: 4, ops: [{ op: "replace", path: "/shared/game/n", value: 1 }], hash: wrong, events: [] });
    assert.equal(room.mismatches, 1);
    session.close();
  }
});

// Rematches (SPEC 9, protocol 1.5): the server moves every member of a finished room into a new
// one with an unasked `joined` (no id) naming the room left, then answers the one who asked
// with an `ack`; a second ask is answered the same way. Who was not moved reads `info.rematch`.
const OVER = { shared: { game: { n: 9 }, turn: null, result: { scores: [3, 4], winners: [1] } }, own: { seat: 0, private: {}, choices: [] } };
const finished = { ...info, state: "finished", seats: [{ seat: 0, name: "ann", taken: true }, { seat: 1, name: "bob", taken: true }] };
const fresh = { ...info, room: "r2", state: "playing" };
const moved = (seat, token, from = "r1") => ({ type: "joined", room: "r2", seat, ...(token ? { token } : {}), rev: 0, view: VIEW, hash: viewHash(VIEW), info: fresh, chat: [], ...(from ? { moved_from: from } : {}) });

/** An open session on `FakeSocket`, closed when the test `t` ends (passed, failed or timed out). */
async function opened(t, FakeSocket, options = {}) {
  const session = new Session("ws://fake/", { WebSocket: FakeSocket, seats: new SeatStore(memoryStorage()), ...options });
  t.after(() => session.close());
  return session.open();
}

/**
 * A fake server of one finished room r1 (its info `finishedInfo`) whose rematch is r2: the first
 * `rematch` moves the asker and answers; one asked again is answered alike, without a move;
 * `refuse` answers `not_allowed` instead (the asker was not moved).
 */
function rematchServer({ refuse = false, finishedInfo = finished } = {}) {
  let made = false;
  return fakeServer((f) => {
    if (f.type === "hello") return [welcome(f.id)];
    const over = { rev: 20, view: OVER, hash: viewHash(OVER), info: finishedInfo, chat: [] };
    if (f.type === "join" && f.room === "r1") return [{ type: "joined", id: f.id, room: "r1", seat: 0, token: "old", ...over }];
    if (f.type === "join" && f.room === "r2" && f.token) return [{ type: "joined", id: f.id, room: "r2", seat: 0, rev: f.rev ?? 0, view: null, hash: null, info: fresh, chat: [] }];
    if (f.type === "join" && f.room === "r2") return [{ ...moved(f.seat ?? 0, "joined", null), id: f.id }];
    if (f.type === "spectate" && f.room === "r1") return [{ type: "joined", id: f.id, room: "r1", seat: null, ...over }];
    if (f.type === "spectate") return [{ ...moved(null, undefined, null), id: f.id }];
    if (f.type === "leave") return [{ type: "ack", id: f.id }];
    if (f.type === "rematch" && refuse) return [{ type: "error", id: f.id, code: "not_allowed", message: "room r1 has had its rematch: room r2", room: "r1" }];
    if (f.type === "rematch") {
      const ack = { type: "ack", id: f.id, room: "r2", rev: 0, info: fresh };
      if (made) return [ack];
      made = true;
      return [moved(0, "new"), ack];
    }
    return [];
  });
}

test("rematch resolves with the room the server moved this seat into, its new token kept", { timeout: 5000 }, async (t) => {
  const { FakeSocket, sockets } = rematchServer();
  const storage = memoryStorage();
  const session = await opened(t, FakeSocket, { seats: new SeatStore(storage), reconnectDelays: [1] });
  const old = await session.join("r1", { name: "ann" });
  const events = [];
  session.addEventListener("moved", (e) => events.push(["session", e.detail.from, e.detail.room.id, e.detail.asked]));
  old.addEventListener("moved", (e) => events.push(["room", e.detail.room.id, e.detail.asked]));
  const next = await old.rematch();
  assert.equal(next.id, "r2");
  assert.equal(next.seat, 0);
  assert.equal(next.info.state, "playing");
  assert.equal(next.mismatches, 0);
  assert.deepEqual(events, [["room", "r2", true], ["session", "r1", "r2", true]]);
  assert.equal(old.movedTo, "r2");
  assert.deepEqual([...session.rooms.keys()], ["r2"], "the finished room is forgotten");
  assert.equal(session.moves.get("r1"), "r2");
  assert.equal(JSON.parse(storage.getItem("oasis:seat:r2")).token, "new");
  assert.equal(next.mirror.token, "new");
  // Asked again (a retry; or another seat asked at the same time): the same room, no failure.
  assert.equal(await session.rematch("r1"), next);
  assert.equal(events.length, 2, "no second move");
  // A drop resumes the new room with its new token, not the finished one.
  const resumed = new Promise((resolve) => session.addEventListener("status", (e) => e.detail.state === "open" && resolve()));
  sockets[0].close(1006);
  await resumed;
  const joins = sockets[1].sent.filter((f) => f.type === "join");
  assert.deepEqual(joins.map(({ id, ...rest }) => rest), [{ type: "join", room: "r2", token: "new", rev: 0 }]);
});

test("an unasked joined naming the room left moves a seat and a spectator whoever asked", { timeout: 5000 }, async (t) => {
  const { FakeSocket, sockets } = rematchServer();
  for (const seat of [0, null]) {
    const session = await opened(t, FakeSocket);
    const old = seat === null ? await session.spectate("r1") : await session.join("r1", { name: "bob" });
    const move = new Promise((resolve) => old.addEventListener("moved", (e) => resolve(e.detail)));
    sockets.at(-1).push(moved(seat, seat === null ? undefined : "bobs"));
    const { room, asked } = await move;
    assert.equal(asked, false);
    assert.equal(room.id, "r2");
    assert.equal(room.seat, seat);
    assert.equal(room.spectator, seat === null);
    assert.equal(session.rooms.has("r1"), false);
    assert.equal(session.moves.get("r1"), "r2");
  }
});

test("an unasked joined without moved_from is no move, whatever it looks like", { timeout: 5000 }, async (t) => {
  const { FakeSocket, sockets } = rematchServer();
  const session = await opened(t, FakeSocket);
  const old = await session.join("r1", { name: "ann" });
  let moves = 0;
  session.addEventListener("moved", () => (moves += 1));
  const joined = new Promise((resolve) => {
    const poll = () => (session.rooms.has("r2") ? resolve() : setTimeout(poll, 1));
    poll();
  });
  sockets.at(-1).push(moved(0, "other", null)); // same game, players and seat: no guess made
  await joined;
  assert.equal(moves, 0);
  assert.equal(old.movedTo, null);
  assert.deepEqual([...session.rooms.keys()], ["r1", "r2"]);
  assert.equal(session.moves.size, 0);
});

test("a rematch refused (this seat was not moved) rejects at once with the server's reason", { timeout: 5000 }, async (t) => {
  const { FakeSocket } = rematchServer({ refuse: true });
  const session = await opened(t, FakeSocket);
  await session.join("r1", { name: "bob" });
  await assert.rejects(session.rematch("r1"), (err) => err instanceof ServerError && err.code === "not_allowed" && /room r2/.test(err.serverMessage));
  assert.equal(session.rooms.has("r1"), true);
  assert.equal(session.moves.size, 0);
});

test("followRematch takes a player back to its seat in the room info.rematch names, and a spectator there", { timeout: 5000 }, async (t) => {
  const { FakeSocket, sockets } = rematchServer({ finishedInfo: { ...finished, rematch: "r2" } });
  for (const seat of [0, null]) {
    const session = await opened(t, FakeSocket);
    const old = seat === null ? await session.spectate("r1") : await session.join("r1", { name: "someone" });
    assert.equal(old.rematchRoom, "r2");
    const events = [];
    old.addEventListener("moved", (e) => events.push([e.detail.room.id, e.detail.asked]));
    const next = await old.followRematch();
    assert.equal(next.id, "r2");
    assert.equal(next.seat, seat);
    assert.deepEqual(events, [["r2", false]]);
    assert.equal(old.movedTo, "r2");
    assert.deepEqual([...session.rooms.keys()], ["r2"]);
    const sent = sockets.at(-1).sent.map(({ id, ...rest }) => rest).filter((f) => f.type !== "hello");
    const asked = seat === null ? { type: "spectate", room: "r2" } : { type: "join", room: "r2", name: "ann", seat: 0 };
    assert.deepEqual(sent.slice(1), [asked, { type: "leave", room: "r1" }], "its old seat, under its old name; then it leaves");
  }
  // A finished room that names no rematch: nothing to follow.
  const plain = rematchServer();
  const session = await opened(t, plain.FakeSocket);
  const old = await session.join("r1", { name: "ann" });
  assert.equal(old.rematchRoom, null);
  await assert.rejects(old.followRematch(), /no rematch/);
});
