// oasis.js: the Oasis protocol (protocol/SPEC.md, version 1) for browsers, as one ES module.
//
// A frontend opens a Session, joins or watches rooms, and reads each Room's view, which the
// module keeps equal to the server's: patches applied in revision order, the view hash checked
// after each (SPEC 4), `sync` asked for on a gap or a mismatch (SPEC 10). What else it does:
//
// - requests carry ids and return promises: the answer, or a typed error (ServerError with the
//   stable `code` of SPEC 5, ConnectionLost when the connection dropped first);
// - seat tokens are kept in localStorage per room, so a reloaded page resumes its seat; a dropped
//   connection is reopened with a backoff and every room resumed from its last revision (SPEC 11);
// - `redirect` answers and frames, and `bye` with a `url`, move the session to the node they name
//   (SPEC 18); the WebSocket URL carries `?room=<id>` when the session is about one room;
// - `ping` every half `idle_timeout`, so a player who thinks for long is not dropped (SPEC 6);
// - frames are paced under `welcome.limits.rate_per_second` and `rate_burst` (SPEC 14);
// - a rematch (SPEC 9, protocol 1.5) moves every member of a finished room into a new one with
//   an unasked `joined` naming the room left (`moved_from`): the session keeps the new Room (a
//   seat's new token stored as any), forgets the old one and says so with a "moved" event,
//   whoever asked (`session.rematch(room)`); who was not moved (a player back in the finished
//   room, a delayed room's spectator) reads `info.rematch` and goes there with
//   `session.followRematch(room)`, a move of its own.
//
// Events (EventTarget): Session "status" (detail {state, text}: connecting, open, reconnecting,
// closed), "notice" (detail text), "moved" (detail {from, room, asked}: a rematch moved us from
// room id `from` into the Room `room`; `asked`: this session asked for it, so it is the new
// room's host unless another seat asked at the same moment); Room "change" (view,
// revision or info changed), "events" (detail {rev, events} of one applied patch), "chat"
// (detail one chat frame), "pause", "moved" (detail {room, asked}: the Room we are in now).
//
// The view is never edited in place: each patch makes a new document sharing what it did not
// change, so a frontend may keep an old view (for an animation) and compare by identity.

import {
  CLIENT_LIMITS,
  Float,
  FrameError,
  PatchError,
  SERVER_LIMITS,
  applyPatch,
  canonical,
  decodeFrame,
  encodeFrame,
  viewHash,
} from "./wire.js";

export { Float, FrameError, PatchError, applyPatch, canonical, decodeFrame, encodeFrame, viewHash };
export { CLIENT_LIMITS, SERVER_LIMITS };

export const PROTOCOL_VERSION = 1;
/** The view hash rule asked for (SPEC 4): the server hashes the shared part once a revision. */
export const HASH_RULE = 2;
export const MAX_REDIRECTS = 5;
export const ANSWER_TIMEOUT_MS = 30000;
/** Milliseconds between reconnection attempts; the last one repeats for as long as it takes. */
export const RECONNECT_DELAYS_MS = [100, 250, 500, 1000, 2000, 3000, 5000, 10000];

// Errors ------------------------------------------------------------------------------------

/** The base of what this module throws. */
export class OasisError extends Error {
  constructor(message) {
    super(message);
    this.name = "OasisError";
  }
}

/** The server refused a request (an `error` frame); `code` is SPEC 5's stable code. */
export class ServerError extends OasisError {
  constructor(code, message, frame = {}) {
    super(`${code}: ${message}`);
    this.name = "ServerError";
    this.code = code;
    this.serverMessage = message;
    this.frame = frame;
  }
}

/** The connection dropped (or could not be opened) before the answer came. */
export class ConnectionLost extends OasisError {
  constructor(message) {
    super(message);
    this.name = "ConnectionLost";
  }
}

// Seat tokens ----------------------------------------------------------------------------------

/** Seat tokens per room in a Storage (localStorage by default): the only way back to a seat. */
export class SeatStore {
  constructor(storage = globalThis.localStorage ?? null, prefix = "oasis:seat:") {
    this.storage = storage;
    this.prefix = prefix;
  }
  get(room) {
    try {
      const raw = this.storage?.getItem(this.prefix + room);
      const seat = raw ? JSON.parse(raw) : null;
      return seat && typeof seat.token === "string" ? seat : null;
    } catch {
      return null;
    }
  }
  set(room, seat, token) {
    this.storage?.setItem(this.prefix + room, JSON.stringify({ seat, token }));
  }
  delete(room) {
    this.storage?.removeItem(this.prefix + room);
  }
}

// The view mirror: SPEC 10 as a core without I/O ------------------------------------------------

/**
 * One room's view for one audience, rebuilt from `joined`, `state` and `patch` frames.
 * `onFrame(frame)` returns {changed, needSync, events, problem}; the caller sends `sync`.
 */
export class Mirror {
  constructor(room, now = () => performance.now()) {
    this.room = room;
    this.rev = -1;
    this.view = null;
    this.info = {};
    this.seat = null;
    this.token = null;
    this.spectator = false;
    this.syncPending = false;
    this.resyncs = 0;
    /** Views whose hash was not the server's (after a patch, or a full view): a desync count. */
    this.mismatches = 0;
    /** The view hash rule of the connection's frames (SPEC 4), as `welcome` confirmed. */
    this.hashRule = 1;
    this.now = now;
    this.clockSince = now();
  }

  get shared() {
    return this.view?.shared ?? {};
  }
  get own() {
    const own = this.view?.own;
    return own && typeof own === "object" ? own : null;
  }
  get choices() {
    const choices = this.own?.choices;
    return Array.isArray(choices) ? choices : [];
  }
  get result() {
    const result = this.shared.result;
    return result && typeof result === "object" ? result : null;
  }
  get over() {
    return this.result !== null;
  }
  get game() {
    return String(this.info.game ?? "");
  }

  /** Each seat's clock in milliseconds at `now`, or null in a room without clocks (SPEC 20). */
  clockLeft(now = this.now()) {
    const clock = this.view?.clock;
    if (!clock || !Array.isArray(clock.remaining_ms)) return null;
    const left = clock.remaining_ms.map((ms) => Number(ms));
    const running = clock.running;
    const ticking = this.info.state === "playing" && !this.info.paused;
    if (Number.isInteger(running) && running >= 0 && running < left.length && ticking) {
      left[running] = Math.max(0, left[running] - (now - this.clockSince));
    }
    return left;
  }

  onFrame(frame) {
    switch (frame.type) {
      case "joined":
        return this.onJoined(frame);
      case "state":
        return this.replace(frame, "state");
      case "patch":
        return this.onPatch(frame);
      case "room":
        if (frame.info && typeof frame.info === "object") {
          if (this.info.state === "open" && frame.info.state === "playing") {
            this.clockSince = this.now();
          }
          this.info = frame.info;
          return update({ changed: true });
        }
        return update();
      default:
        return update();
    }
  }

  onJoined(frame) {
    if (frame.info && typeof frame.info === "object") this.info = frame.info;
    this.seat = Number.isInteger(frame.seat) ? frame.seat : null;
    this.spectator = this.seat === null;
    if (typeof frame.token === "string") this.token = frame.token;
    if (frame.view == null) {
      if (this.view === null || frame.rev !== this.rev) {
        return this.askSync(`resumed at rev ${frame.rev} but this view is at ${this.rev}`);
      }
      return update({ changed: true });
    }
    return this.replace(frame, "joined");
  }

  replace(frame, what) {
    const { rev, view } = frame;
    if (!Number.isInteger(rev) || !view || typeof view !== "object") {
      return this.askSync(`${what} without a revision and a view`);
    }
    if (rev < this.rev && what === "state") {
      this.syncPending = false; // an answer to an older sync after newer patches
      return update();
    }
    this.view = view;
    this.rev = rev;
    this.syncPending = false;
    const elapsed = Number(frame.elapsed_ms ?? 0);
    this.clockSince = this.now() - (Number.isFinite(elapsed) ? elapsed : 0);
    if (frame.hash != null && viewHash(view, this.hashRule) !== frame.hash) {
      this.mismatches += 1;
      return update({ changed: true, problem: `${what} at rev ${rev} has a wrong hash` });
    }
    return update({ changed: true });
  }

  onPatch(frame) {
    const { rev, ops } = frame;
    const events = (frame.events ?? []).filter((e) => e && typeof e === "object");
    if (!Number.isInteger(rev) || !Array.isArray(ops)) {
      return this.askSync("a patch without a revision or ops");
    }
    if (this.view === null) return this.askSync(`patch ${rev} arrived before any view`);
    if (rev <= this.rev) return update();
    if (rev !== this.rev + 1) return this.askSync(`missed revisions ${this.rev + 1} to ${rev - 1}`);
    let next;
    try {
      next = applyPatch(this.view, ops);
    } catch (err) {
      return this.askSync(`patch ${rev} does not fit the view (${err.message})`);
    }
    this.view = next;
    this.rev = rev;
    this.clockSince = this.now();
    if (viewHash(next, this.hashRule) !== frame.hash) {
      this.mismatches += 1;
      const result = this.askSync(`the view after patch ${rev} has a wrong hash`);
      return { ...result, changed: true, events };
    }
    return update({ changed: true, events });
  }

  askSync(problem) {
    if (this.syncPending) return update({ problem });
    this.syncPending = true;
    this.resyncs += 1;
    return update({ needSync: true, problem });
  }
}

function update(fields = {}) {
  return { changed: false, needSync: false, events: [], problem: null, ...fields };
}

// Rate pacing ---------------------------------------------------------------------------------

/** A token bucket a little under the server's (SPEC 14), so a burst of clicks never gets the
 * connection closed for `rate_limited`: sends wait instead. */
export class Pacer {
  constructor(rate = 40, burst = 80, now = () => performance.now()) {
    this.now = now;
    this.configure(rate, burst);
  }
  configure(rate, burst) {
    this.rate = Math.max(0.1, Number(rate) * 0.9) / 1000; // tokens per millisecond
    this.burst = Math.max(1, Math.floor(Number(burst) * 0.9));
    this.tokens = this.burst;
    this.last = this.now();
  }
  /** Milliseconds to wait before the next frame may go (0: now); takes its token. */
  delay() {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.rate);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : -this.tokens / this.rate;
  }
}

// Rooms -----------------------------------------------------------------------------------------

/** A room this session is in: its mirror plus the requests about it. */
export class Room extends EventTarget {
  constructor(session, id) {
    super();
    this.session = session;
    this.id = id;
    this.mirror = new Mirror(id);
    this.mirror.hashRule = session.hashRule ?? 1;
    this.chat = [];
    /** The last events of applied patches, oldest first: {rev, event}. */
    this.log = [];
    this.paused = false;
    this.gone = false;
    /** The room a rematch moved us into from this one (SPEC 9), once it did; null before. */
    this.movedTo = null;
  }
  get view() {
    return this.mirror.view;
  }
  get rev() {
    return this.mirror.rev;
  }
  get info() {
    return this.mirror.info;
  }
  get seat() {
    return this.mirror.seat;
  }
  get spectator() {
    return this.mirror.spectator;
  }
  get choices() {
    return this.mirror.choices;
  }
  /** May this seat take back a step now (`own.undo`, SPEC section 24)? */
  get canUndo() {
    return this.mirror.own?.undo === true && !this.paused;
  }
  get result() {
    return this.mirror.result;
  }
  get turn() {
    return this.mirror.shared.turn ?? null;
  }
  /** Does this seat decide now? */
  get myTurn() {
    return this.seat !== null && this.choices.length > 0 && !this.paused;
  }
  get mismatches() {
    return this.mirror.mismatches;
  }
  clockLeft(now) {
    return this.mirror.clockLeft(now);
  }

  /** Choose: `choice` is an index into `choices` or one of its maps. Resolves with the ack. */
  act(choice) {
    return this.session.request({ type: "act", room: this.id, rev: this.rev, choice });
  }
  /** Take back this seat's last step of the turn (SPEC section 24). Resolves with the ack. */
  undo() {
    return this.session.request({ type: "undo", room: this.id, rev: this.rev });
  }
  start({ bots = false } = {}) {
    return this.session.request({ type: "start", room: this.id, bots });
  }
  /** Play again: the next match with the same players in a new room (SPEC 9), once this one is
   * finished. Resolves with the new Room (see Session.rematch). */
  rematch() {
    return this.session.rematch(this.id);
  }
  /** The rematch this finished room names (`info.rematch`, SPEC 9), or null. */
  get rematchRoom() {
    return typeof this.info.rematch === "string" ? this.info.rematch : null;
  }
  /** Go to the rematch this finished room names, where we were not moved (see
   * Session.followRematch). Resolves with the new Room. */
  followRematch() {
    return this.session.followRematch(this.id);
  }
  say(text) {
    return this.session.request({ type: "chat", room: this.id, text });
  }
  sync() {
    return this.session.request({ type: "sync", room: this.id });
  }
  async leave() {
    const open = this.info.state === "open";
    try {
      return await this.session.request({ type: "leave", room: this.id });
    } finally {
      if (open) this.session.seats.delete(this.id);
      this.session.forget(this.id);
    }
  }

  _frame(frame) {
    if (frame.type === "chat") {
      this.chat.push(frame);
      if (this.chat.length > 200) this.chat.splice(0, this.chat.length - 200);
      this.dispatchEvent(new CustomEvent("chat", { detail: frame }));
      return update();
    }
    if (frame.type === "pause") {
      this.paused = Boolean(frame.paused);
      this.dispatchEvent(new CustomEvent("pause", { detail: frame }));
      this.dispatchEvent(new CustomEvent("change", { detail: {} }));
      return update();
    }
    if (frame.type === "joined" && Array.isArray(frame.chat)) {
      this.chat = frame.chat.slice(-200);
    }
    if (frame.type === "joined" || frame.type === "room") {
      this.paused = Boolean(frame.info?.paused);
    }
    const result = this.mirror.onFrame(frame);
    if (result.events.length) {
      for (const event of result.events) this.log.push({ rev: frame.rev, event });
      if (this.log.length > 500) this.log.splice(0, this.log.length - 500);
      this.dispatchEvent(new CustomEvent("events", { detail: { rev: frame.rev, events: result.events } }));
    }
    if (result.changed) this.dispatchEvent(new CustomEvent("change", { detail: result }));
    return result;
  }
}

// The session -----------------------------------------------------------------------------------

/**
 * One connection to a server, reopened when it drops, holding the rooms it is in.
 * `url`: the WebSocket address (default: this page's server). Options: `name` (the client's
 * name in `hello`), `seats` (a SeatStore), `WebSocket` (a constructor, for other runtimes).
 */
export class Session extends EventTarget {
  constructor(url = defaultUrl(), options = {}) {
    super();
    this.url = url;
    this.home = url;
    this.name = options.name ?? "oasis-web/0.1";
    this.seats = options.seats ?? new SeatStore();
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.reconnectDelays = options.reconnectDelays ?? RECONNECT_DELAYS_MS;
    this.rooms = new Map();
    this.welcome = null;
    /** The view hash rule of this session's frames (SPEC 4), from `welcome`. */
    this.hashRule = 1;
    this.closed = false;
    this.state = "new";
    this.connections = 0;
    this.problems = [];
    this.pacer = new Pacer();
    this._ws = null;
    this._ids = 1;
    this._pending = new Map();
    this._sending = Promise.resolve();
    this._pinger = null;
    this._nextUrl = "";
    this._roomHint = "";
    this._reconnecting = null;
    /** Room ids a rematch moved us out of, each to the room id it moved us into (SPEC 9). */
    this.moves = new Map();
    /** Room ids whose `rematch` we asked for and is not answered yet (a move from one: "asked"). */
    this._rematching = new Set();
  }

  /** Connect and say hello; resolves with the session once `welcome` arrived. */
  async open() {
    await this._connect(this.url);
    this.connections += 1;
    this._status("open", "connected");
    return this;
  }

  close() {
    this.closed = true;
    clearInterval(this._pinger);
    this._failPending(new ConnectionLost("the session was closed"));
    this._ws?.close(1000, "bye");
    this._status("closed", "closed");
  }

  get games() {
    return this.welcome?.games ?? [];
  }

  // Requests ------------------------------------------------------------------------------

  /** Send `frame` with a fresh id; resolves with its answer, rejects with a typed error.
   * A `redirect` answer moves the session and sends the frame again (up to 5 times). */
  async request(frame, { patience = ANSWER_TIMEOUT_MS } = {}) {
    for (let i = 0; i < MAX_REDIRECTS; i++) {
      if (this._reconnecting && frame.type !== "hello") await this._reconnecting;
      const answer = await this._requestOnce(frame, patience);
      if (answer.type !== "redirect") return answer;
      await this.follow(String(answer.url ?? ""), typeof frame.room === "string" ? frame.room : "");
    }
    throw new OasisError(`${frame.type} was redirected ${MAX_REDIRECTS} times; giving up`);
  }

  _requestOnce(frame, patience, ws = this._ws) {
    const id = this._ids++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new ConnectionLost(`no answer to ${frame.type} within ${patience / 1000} s`));
      }, patience);
      this._pending.set(id, {
        resolve: (answer) => {
          clearTimeout(timer);
          if (answer.type === "error") {
            reject(new ServerError(String(answer.code), String(answer.message ?? ""), answer));
          } else {
            resolve(answer);
          }
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      this._send({ ...frame, id }, ws).catch((err) => {
        this._pending.get(id)?.reject(err);
        this._pending.delete(id);
      });
    });
  }

  /** Frames go out in order, each when the pacer lets it. */
  _send(frame, ws = this._ws) {
    const go = this._sending.then(async () => {
      const wait = this.pacer.delay();
      if (wait > 0) await sleep(wait);
      if (!ws || ws.readyState !== 1) throw new ConnectionLost("not connected");
      ws.send(encodeFrame(frame));
    });
    this._sending = go.catch(() => {});
    return go;
  }

  /** The first page of the public rooms (of `game`), oldest first: an array of `info`. */
  listRooms(game) {
    return this.listRoomsPage(game ? { game } : {}).then((page) => page.rooms);
  }

  /**
   * One page of the public rooms (SPEC 7): `{game?, state?, free?, after?, limit?}`; resolves
   * with `{rooms, next}`, `next` the cursor to pass as `after` for the following page (null on
   * the last one).
   */
  listRoomsPage(filters = {}) {
    const frame = { type: "list_rooms" };
    for (const key of ["game", "state", "free", "after", "limit"]) {
      if (filters[key] !== undefined && filters[key] !== null) frame[key] = filters[key];
    }
    return this.request(frame).then((answer) => ({ rooms: answer.rooms ?? [], next: answer.next ?? null }));
  }

  /** `create` (SPEC 7: game, players, public, clock, bots, bot, ...); resolves with the ack. */
  create(options) {
    return this.request({ type: "create", ...options });
  }

  /**
   * Take a seat in `room`, or come back to the one this browser holds there (its token is in
   * the SeatStore). Resolves with the Room once joined.
   */
  async join(room, { name, seat } = {}) {
    const held = this.seats.get(room);
    if (held) {
      try {
        return await this._joined({ type: "join", room, token: held.token });
      } catch (err) {
        if (!(err instanceof ServerError) || err.code !== "bad_token") throw err;
        this.seats.delete(room); // the seat was freed (or the room is another one now)
      }
    }
    const frame = { type: "join", room };
    if (name) frame.name = name;
    if (Number.isInteger(seat)) frame.seat = seat;
    return this._joined(frame);
  }

  /** Does this browser hold a seat token for `room`? */
  holdsSeat(room) {
    return this.seats.get(room) !== null;
  }

  quick(game, players, name) {
    const frame = { type: "quick", game, players };
    if (name) frame.name = name;
    return this._joined(frame);
  }

  spectate(room) {
    return this._joined({ type: "spectate", room });
  }

  /** Replay a finished match (SPEC 17): resolves with the replay room, watched from rev 0. */
  replay(room, interval = 1) {
    return this._joined({ type: "replay", room, interval });
  }

  forget(room) {
    this.rooms.delete(room);
  }

  /**
   * Play again (SPEC 9, protocol 1.5): ask for the next match of the finished `room` (an id),
   * where this connection holds a seat. The server moves every member into a new room (an
   * unasked `joined` each: a "moved" event) before it answers; resolves with the new Room.
   * Asked again (another seat asked at the same time, a retry), it is answered as the first was,
   * after our own move: the same Room. A refusal rejects (ServerError `not_allowed`: the match
   * is not over, or we were not moved, and its message names the new room).
   */
  async rematch(room) {
    this._rematching.add(room);
    try {
      const ack = await this.request({ type: "rematch", room });
      const moved = this.rooms.get(ack.room);
      if (!moved) throw new OasisError(`the server made room ${ack.room} but did not move us into it`);
      return moved;
    } finally {
      this._rematching.delete(room);
    }
  }

  /**
   * Go to the rematch of the finished `room` (an id) that we were not moved into, as its
   * `info.rematch` names it (SPEC 9: a player who had left and came back, a spectator of a room
   * with `spectator_delay`): a spectator spectates it, a player takes its old seat there (left
   * free for it) under its old name. Then the finished room is left and forgotten, and the move
   * told as a server's move is ("moved", `asked` false); resolves with the new Room. A seat
   * taken since, a room closed: the ServerError.
   */
  async followRematch(room) {
    const old = this.rooms.get(room);
    const next = old?.rematchRoom;
    if (!next) throw new OasisError(`room ${room} has no rematch to go to`);
    let joined;
    if (old.spectator) {
      joined = await this.spectate(next);
    } else {
      const name = old.info.seats?.[old.seat]?.name;
      joined = await this.join(next, { seat: old.seat, ...(name ? { name } : {}) });
    }
    await this.request({ type: "leave", room }, { patience: 5000 }).catch(() => {});
    this._moved(room, joined);
    return joined;
  }

  async _joined(frame) {
    if (typeof frame.room === "string") this._roomHint = frame.room;
    const answer = await this.request(frame);
    const room = this.rooms.get(answer.room);
    if (answer.type !== "joined" || !room) {
      throw new OasisError(`the server answered ${answer.type} to ${frame.type}`);
    }
    return room;
  }

  // Connections ---------------------------------------------------------------------------------

  _withRoom(url) {
    const rooms = this.rooms.size ? [...this.rooms.keys()] : this._roomHint ? [this._roomHint] : [];
    if (rooms.length !== 1) return url;
    const parsed = new URL(url);
    parsed.searchParams.set("room", rooms[0]);
    return parsed.toString();
  }

  _connect(url) {
    this._status("connecting", `connecting to ${url}`);
    return new Promise((resolve, reject) => {
      let ws;
      try {
        ws = new this.WebSocket(this._withRoom(url));
      } catch (err) {
        reject(new ConnectionLost(`cannot open ${url}: ${err.message}`));
        return;
      }
      ws.binaryType = "arraybuffer";
      let opened = false;
      ws.onopen = () => {
        opened = true;
        this._ws = ws;
        this.url = url;
        this._requestOnce(
          {
            type: "hello",
            version: PROTOCOL_VERSION,
            client: this.name.slice(0, 64),
            hash_rule: HASH_RULE,
          },
          ANSWER_TIMEOUT_MS,
          ws,
        ).then(
          (welcome) => {
            this.welcome = welcome;
            // The rule the server confirmed; a server before 1.4 says none: rule 1.
            this.hashRule = welcome.hash_rule === HASH_RULE ? HASH_RULE : 1;
            for (const room of this.rooms.values()) room.mirror.hashRule = this.hashRule;
            const limits = welcome.limits ?? {};
            this.pacer.configure(limits.rate_per_second ?? 40, limits.rate_burst ?? 80);
            this._keepAlive(limits.idle_timeout);
            resolve();
          },
          (err) => {
            ws.close();
            reject(err);
          },
        );
      };
      ws.onmessage = (message) => this._frame(message.data);
      ws.onerror = () => {}; // the close that follows says it all
      ws.onclose = (event) => {
        if (!opened) reject(new ConnectionLost(`cannot reach ${url}`));
        this._dropped(ws, event);
      };
    });
  }

  _keepAlive(idleTimeout) {
    clearInterval(this._pinger);
    const idle = Number(idleTimeout);
    const period = Number.isFinite(idle) && idle > 0 ? Math.max(1000, (idle * 1000) / 2) : 150000;
    this._pinger = setInterval(() => {
      if (this._ws?.readyState === 1 && !this._reconnecting) {
        this.request({ type: "ping" }, { patience: period }).catch(() => {});
      }
    }, period);
  }

  /** Move to the node at `url` ("": the address the session was opened with) and resume every
   * room there (SPEC 18); resolves once done. */
  async follow(url, room = "") {
    this._nextUrl = url || this.home;
    if (room) this._roomHint = room;
    const ws = this._ws;
    this._ws = null;
    this._failPending(new ConnectionLost("moving to another node"), ws);
    ws?.close(1000, "redirected");
    await this._reconnect(true);
  }

  _dropped(ws, event) {
    if (this._ws !== ws) return;
    this._ws = null;
    this._failPending(new ConnectionLost("the connection dropped"));
    if (this.closed) return;
    const why = event?.code ? `close code ${event.code}${event.reason ? `: ${event.reason}` : ""}` : "no close frame";
    this._notice(`connection lost (${why}); reconnecting`);
    this._reconnect(false).catch(() => {});
  }

  _reconnect(immediately) {
    if (!this._reconnecting) {
      this._reconnecting = this._reconnectLoop(immediately).finally(() => {
        this._reconnecting = null;
      });
    }
    return this._reconnecting;
  }

  async _reconnectLoop(immediately) {
    this._status("reconnecting", "reconnecting");
    const previous = this.url;
    for (let attempt = 0; !this.closed; attempt++) {
      const delays = this.reconnectDelays;
      const delay = delays[Math.min(attempt, delays.length - 1)];
      if (!(immediately && attempt === 0)) await sleep(delay);
      if (this.closed) return;
      let url;
      if (this._nextUrl) {
        url = this._nextUrl;
        this._nextUrl = "";
      } else {
        url = attempt % 2 === 0 ? previous : this.home; // the node we used, then where we began
      }
      try {
        await this._connect(url);
        await this._resumeRooms();
      } catch (err) {
        const ws = this._ws;
        this._ws = null;
        ws?.close();
        this._notice(`reconnecting: ${err.message}`);
        continue;
      }
      this._roomHint = "";
      this.connections += 1;
      this._status("open", "reconnected; rooms resumed");
      return;
    }
  }

  async _resumeRooms() {
    for (const [id, room] of [...this.rooms]) {
      const mirror = room.mirror;
      let frame;
      if (mirror.token !== null) frame = { type: "join", room: id, token: mirror.token };
      else if (mirror.spectator) frame = { type: "spectate", room: id };
      else continue;
      if (mirror.view !== null && mirror.rev >= 0) frame.rev = mirror.rev;
      let answer;
      try {
        answer = await this._requestOnce(frame, ANSWER_TIMEOUT_MS);
      } catch (err) {
        if (err instanceof ServerError) {
          this._notice(`could not resume room ${id}: ${err.serverMessage}`);
          if (err.code === "not_found" || err.code === "bad_token") {
            room.gone = true;
            this.forget(id);
            room.dispatchEvent(new CustomEvent("change", { detail: {} }));
          }
          continue;
        }
        throw err;
      }
      if (answer.type === "redirect") {
        this._nextUrl = String(answer.url ?? "");
        throw new ConnectionLost(`room ${id} is served at ${answer.url || "?"}`);
      }
    }
  }

  _failPending(err, ws) {
    void ws;
    for (const entry of this._pending.values()) entry.reject(err);
    this._pending.clear();
  }

  // Frames --------------------------------------------------------------------------------------

  _frame(data) {
    if (typeof data === "string") {
      this._problem("the server sent a text frame; protocol frames are binary");
      return;
    }
    let frame;
    try {
      frame = decodeFrame(new Uint8Array(data), SERVER_LIMITS);
    } catch (err) {
      this._problem(`undecodable frame from the server (${err.message})`);
      return;
    }
    const entry = Number.isInteger(frame.id) ? this._pending.get(frame.id) : undefined;
    // Answers that are also room frames (joined, state) update the room first, so a requester
    // sees the new view as soon as it has its answer.
    this._roomFrame(frame);
    if (entry) {
      this._pending.delete(frame.id);
      entry.resolve(frame);
      return;
    }
    if (frame.type === "error") {
      this._notice(`server error ${frame.code}: ${frame.message ?? ""}`);
    } else if (frame.type === "bye") {
      this._notice(`the server says goodbye: ${frame.reason ?? ""}`);
      if (frame.url) this._nextUrl = String(frame.url);
    } else if (frame.type === "redirect") {
      this._notice(`room ${frame.room}: ${frame.reason || "it moved"}; following it`);
      this._nextUrl = String(frame.url ?? "") || this.home;
      this._ws?.close(1000, "following a room");
    }
  }

  _roomFrame(frame) {
    const id = frame.room;
    if (typeof id !== "string") return;
    if (!["joined", "state", "patch", "room", "chat", "pause"].includes(frame.type)) return;
    let room = this.rooms.get(id);
    // An unasked joined naming the room left: a rematch moved us (SPEC 9).
    const from = frame.type === "joined" && frame.id === undefined && typeof frame.moved_from === "string" && frame.moved_from !== id ? frame.moved_from : null;
    if (frame.type === "joined" && !room) {
      room = new Room(this, id);
      this.rooms.set(id, room);
    }
    if (!room) return;
    if (frame.type === "joined" && typeof frame.token === "string" && Number.isInteger(frame.seat)) {
      this.seats.set(id, frame.seat, frame.token);
    }
    if (frame.type === "joined" && room.mirror.token === null) {
      const held = this.seats.get(id);
      if (held && Number.isInteger(frame.seat) && held.seat === frame.seat) room.mirror.token = held.token;
    }
    const result = room._frame(frame);
    if (result.problem) this._problem(`room ${id}: ${result.problem}`);
    if (result.needSync) {
      this.request({ type: "sync", room: id }).catch(() => {
        room.mirror.syncPending = false;
      });
    }
    if (from !== null) this._moved(from, room);
  }

  /** A rematch moved us from the room id `from` into the Room `room`: the old one (if we held
   * it) is forgotten (it sends nothing more, and is not resumed after a drop). */
  _moved(from, room) {
    const asked = this._rematching.has(from);
    const old = this.rooms.get(from);
    this.moves.set(from, room.id);
    this.forget(from);
    if (old) {
      old.movedTo = room.id;
      old.dispatchEvent(new CustomEvent("moved", { detail: { room, asked } }));
    }
    this.dispatchEvent(new CustomEvent("moved", { detail: { from, room, asked } }));
  }

  _problem(text) {
    this.problems.push(text);
    this._notice(`protocol problem: ${text}`);
  }

  _notice(text) {
    this.dispatchEvent(new CustomEvent("notice", { detail: text }));
  }

  _status(state, text) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("status", { detail: { state, text } }));
  }
}

/** The WebSocket address of the server that served this page (ws: or wss: as the page). */
export function defaultUrl() {
  const where = globalThis.location;
  if (!where?.host) return "ws://127.0.0.1:8765/";
  return `${where.protocol === "https:" ? "wss:" : "ws:"}//${where.host}/`;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
