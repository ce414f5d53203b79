// Oasis's side of the load generator: protocol/SPEC.md spoken with `ws`, a msgpack codec
// (@msgpack/msgpack) and a JSON Patch library (fast-json-patch), as a frontend would.
//
// Six connections per room, kept across matches: each says `hello`; seat 0 `create`s a 4-seat
// tiny room, the seats `join`, the spectators `spectate`, seat 0 `start`s; every viewer applies
// each `patch` to its own view. A new match: every member `leave`s, then the same again; or, with
// `RematchDriver` (kind `oasis-rematch`, protocol 1.5), seat 0 sends `rematch` and the server
// moves all six into a new room with the match started: each gets an unasked `joined` with its
// new view. The view hash of each patch is not recomputed here (the bench measures the server);
// `check` asks the server for every viewer's view (`sync`) and compares it with the one rebuilt
// from patches.

import WebSocket from "ws";
import { decode, encode } from "@msgpack/msgpack";
import jsonpatch from "fast-json-patch";
import { SEATS, VIEWERS, now, sorted } from "../common.mjs";

const REQUEST_TIMEOUT = 20_000;

function connect(url, onMessage) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 30_000 });
    ws.binaryType = "nodebuffer";
    ws.on("message", (data) => onMessage(data, now()));
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

export class Driver {
  constructor(room, url) {
    this.room = room;
    this.url = url;
    this.sockets = [];
    this.pending = Array.from({ length: VIEWERS }, () => new Map());
    this.nextId = 0;
    this.views = new Array(VIEWERS).fill(null);
    this.revs = new Array(VIEWERS).fill(0);
    this.resyncing = new Array(VIEWERS).fill(false);
    this.roomId = null;
    this.moved = new Array(VIEWERS).fill(null);
    /** Each viewer's unasked `joined` of a rematch (`RematchDriver`), until the move is done. */
    this.onMoved = null;
  }

  async open() {
    for (let i = 0; i < VIEWERS; i++) {
      this.sockets.push(await connect(this.url, (data, at) => this.frame(i, data, at)));
    }
    await Promise.all(
      this.sockets.map((_, i) => this.request(i, { type: "hello", version: 1, client: "bench", hash_rule: 2 })),
    );
    await this.start();
  }

  async newMatch() {
    const old = this.roomId;
    await Promise.all(this.sockets.map((_, i) => this.request(i, { type: "leave", room: old })));
    await this.start();
  }

  async start() {
    const created = await this.request(0, { type: "create", game: "tiny", players: SEATS });
    this.roomId = created.room;
    for (let i = 0; i < SEATS; i++) {
      const joined = await this.request(i, { type: "join", room: this.roomId, name: `b${i}` });
      this.views[i] = joined.view;
      this.revs[i] = joined.rev;
    }
    for (let i = SEATS; i < VIEWERS; i++) {
      const joined = await this.request(i, { type: "spectate", room: this.roomId });
      this.views[i] = joined.view;
      this.revs[i] = joined.rev;
    }
    await this.request(0, { type: "start", room: this.roomId });
  }

  request(i, frame) {
    const id = ++this.nextId;
    const began = now();
    const steps = this.room.tally.steps;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending[i].delete(id);
        reject(new Error(`${frame.type}: no answer in ${REQUEST_TIMEOUT} ms`));
      }, REQUEST_TIMEOUT);
      this.pending[i].set(id, (answer) => {
        clearTimeout(timer);
        if (steps !== undefined && this.room.tally.measuring) {
          (steps[frame.type] ??= []).push(now() - began);
        }
        if (answer.type === "error") reject(new Error(`${frame.type} refused: ${answer.code}`));
        else resolve(answer);
      });
      this.sockets[i].send(encode({ ...frame, id }));
    });
  }

  frame(i, data, at) {
    this.room.received(data.length);
    const message = decode(data);
    if (message.type === "patch") {
      if (message.room !== this.roomId || message.rev <= this.revs[i]) return;
      if (message.rev !== this.revs[i] + 1) {
        this.resync(i);
        return;
      }
      this.views[i] = jsonpatch.applyPatch(this.views[i], message.ops, false, true).newDocument;
      this.revs[i] = message.rev;
      this.room.delivered(i, message.rev - 1, data.length, at);
      return;
    }
    const answer = message.id === undefined ? undefined : this.pending[i].get(message.id);
    if (answer !== undefined) {
      this.pending[i].delete(message.id);
      answer(message);
      return;
    }
    if (message.type === "joined") {
      this.moved[i] = message; // (a rematch moved this viewer: SPEC section 9)
      if (this.onMoved !== null) this.onMoved();
      return;
    }
    if (message.type === "error" && message.room === this.roomId) this.room.refused(message.code);
  }

  /** A gap in the revisions (SPEC section 10): replace the view by the server's. */
  async resync(i) {
    if (this.resyncing[i]) return;
    this.resyncing[i] = true;
    try {
      const state = await this.request(i, { type: "sync", room: this.roomId });
      this.views[i] = state.view;
      this.revs[i] = state.rev;
      this.room.resynced(i);
    } catch (error) {
      this.room.tally.error(`sync:${error.message}`);
    } finally {
      this.resyncing[i] = false;
    }
  }

  over(i) {
    return this.views[i].shared.result !== null;
  }

  mayAct(i) {
    const view = this.views[i];
    return view.shared.result === null && view.own.choices.length > 0;
  }

  rev(i) {
    return this.revs[i];
  }

  choices(i) {
    return this.views[i].own.choices.length;
  }

  act(seat, index) {
    const frame = { type: "act", room: this.roomId, rev: this.revs[seat], choice: index };
    this.sockets[seat].send(encode({ ...frame, id: ++this.nextId }));
  }

  normalized(i) {
    const { shared, own } = this.views[i];
    return {
      rev: this.revs[i],
      deck: shared.game.deck,
      counts: shared.game.hands,
      scores: shared.game.scores,
      toMove: shared.turn === null ? -1 : shared.turn.seat,
      over: shared.result !== null,
      hand: own === null ? null : own.private.hand,
    };
  }

  async check() {
    const problems = [];
    for (let i = 0; i < VIEWERS; i++) {
      const state = await this.request(i, { type: "sync", room: this.roomId });
      if (state.rev !== this.revs[i]) {
        problems.push(`viewer ${i} at rev ${this.revs[i]}, the server at ${state.rev}`);
      } else if (JSON.stringify(sorted(state.view)) !== JSON.stringify(sorted(this.views[i]))) {
        problems.push(`viewer ${i}: view rebuilt from patches differs from the server's`);
      }
    }
    return problems;
  }

  async close() {
    for (const ws of this.sockets) ws.terminate();
  }
}

/** The next match by `rematch` (protocol 1.5): seat 0 asks; the server makes the new room, starts
 * it (every seat is taken) and sends each of the six viewers its `joined` there, unasked. */
export class RematchDriver extends Driver {
  async newMatch() {
    this.moved.fill(null);
    const arrived = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("rematch: not moved")), REQUEST_TIMEOUT);
      this.onMoved = () => {
        if (this.moved.every((joined) => joined !== null)) {
          clearTimeout(timer);
          this.onMoved = null;
          resolve();
        }
      };
    });
    const ack = await this.request(0, { type: "rematch", room: this.roomId });
    await arrived;
    for (let i = 0; i < VIEWERS; i++) {
      const joined = this.moved[i];
      if (joined.room !== ack.room) throw new Error(`rematch: viewer ${i} moved to ${joined.room}`);
      this.views[i] = joined.view;
      this.revs[i] = joined.rev;
    }
    this.roomId = ack.room;
  }
}
