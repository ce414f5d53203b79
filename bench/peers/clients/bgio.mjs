// boardgame.io's side of the load generator: its lobby API over HTTP and its socket.io protocol
// (the messages of boardgame.io's own `SocketIO` transport), spoken with socket.io-client and
// the RFC 6902 library boardgame.io itself uses (rfc6902).
//
// Six socket.io connections per room (WebSocket transport only, no long-polling first), kept
// across matches. A match: `POST /games/tiny/create` (4 players), `POST .../join` for each
// seat (its credentials), then every connection `sync`s to the match (a spectator with no
// player id) and receives the state filtered by the game's `playerView`. A choice is an
// `update` with a `MAKE_MOVE` action and the state id it was chosen from; every connection then
// receives a `patch` (the game has `deltaState`) from its previous filtered state to the new
// one, which it applies when it holds that previous state (else it asks for `sync`, as
// boardgame.io's client does). A new match: the same again; `sync`ing to it moves each
// connection off the old one.

import { io } from "socket.io-client";
import { applyPatch } from "rfc6902";
import { choicesOf } from "../tiny.mjs";
import { SEATS, VIEWERS, now, sorted } from "../common.mjs";

const TIMEOUT = 20_000;

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT),
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

export class Driver {
  constructor(room, url) {
    this.room = room;
    this.url = url.replace(/\/$/, "");
    this.sockets = [];
    this.states = new Array(VIEWERS).fill(null);
    this.lastBytes = new Array(VIEWERS).fill(0);
    this.synced = new Array(VIEWERS).fill(null);
    this.matchID = null;
    this.credentials = [];
  }

  async open() {
    for (let i = 0; i < VIEWERS; i++) this.sockets.push(await this.connect(i));
    await this.start();
  }

  connect(i) {
    return new Promise((resolve, reject) => {
      const socket = io(`${this.url}/tiny`, {
        transports: ["websocket"],
        forceNew: true,
        reconnection: false,
        timeout: TIMEOUT,
      });
      // Frame sizes: what engine.io hands socket.io (the WebSocket message less its 1-byte
      // engine.io packet type), counted before socket.io decodes it.
      socket.io.on("open", () => {
        socket.io.engine.on("data", (data) => {
          const bytes = 1 + (typeof data === "string" ? Buffer.byteLength(data) : data.length);
          this.lastBytes[i] = bytes;
          this.room.received(bytes);
        });
      });
      socket.on("sync", (matchID, info) => this.onSync(i, matchID, info));
      socket.on("patch", (matchID, prev, next, patch) => this.onPatch(i, matchID, prev, patch));
      socket.on("update", (matchID, state) => this.onUpdate(i, matchID, state));
      socket.once("connect", () => resolve(socket));
      socket.once("connect_error", reject);
    });
  }

  async newMatch() {
    await this.start();
  }

  async start() {
    const base = `${this.url}/games/tiny`;
    const { matchID } = await post(`${base}/create`, { numPlayers: SEATS });
    const joins = [];
    for (let i = 0; i < SEATS; i++) {
      joins.push(post(`${base}/${matchID}/join`, { playerID: String(i), playerName: `b${i}` }));
    }
    this.credentials = (await Promise.all(joins)).map((j) => j.playerCredentials);
    this.matchID = matchID;
    this.states.fill(null);
    await Promise.all(this.sockets.map((_, i) => this.sync(i)));
  }

  sync(i) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("sync: no answer")), TIMEOUT);
      this.synced[i] = (state) => {
        clearTimeout(timer);
        resolve(state);
      };
      const seat = i < SEATS ? String(i) : null;
      const credentials = i < SEATS ? this.credentials[i] : undefined;
      this.sockets[i].emit("sync", this.matchID, seat, credentials, SEATS);
    });
  }

  onSync(i, matchID, info) {
    if (matchID !== this.matchID) return;
    this.states[i] = info.state;
    const waiting = this.synced[i];
    this.synced[i] = null;
    if (waiting !== null) waiting(info.state);
    else this.room.resynced(i);
  }

  onPatch(i, matchID, prev, patch) {
    const state = this.states[i];
    if (matchID !== this.matchID || state === null) return;
    if (state._stateID !== prev) {
      this.sockets[i].emit("sync", this.matchID, i < SEATS ? String(i) : null, this.credentials[i], SEATS);
      return;
    }
    const arrived = now();
    const errors = applyPatch(state, patch).filter((e) => e !== null);
    if (errors.length > 0) {
      this.room.tally.error("patch_failed");
      return;
    }
    this.room.delivered(i, prev, this.lastBytes[i], arrived);
  }

  onUpdate(i, matchID, state) {
    if (matchID !== this.matchID) return;
    const prev = this.states[i]?._stateID;
    this.states[i] = state;
    if (prev !== undefined && state._stateID > prev) {
      this.room.delivered(i, prev, this.lastBytes[i], now());
    }
  }

  over(i) {
    return this.states[i].ctx.gameover !== undefined;
  }

  mayAct(i) {
    const state = this.states[i];
    return state.ctx.gameover === undefined && state.ctx.currentPlayer === String(i);
  }

  rev(i) {
    return this.states[i]._stateID;
  }

  choiceList(i) {
    const { G } = this.states[i];
    return choicesOf(G.hand, G.deck);
  }

  choices(i) {
    return this.choiceList(i).length;
  }

  act(seat, index) {
    const choice = this.choiceList(seat)[index];
    const playerID = String(seat);
    const action = {
      type: "MAKE_MOVE",
      payload: {
        type: choice.kind,
        args: choice.kind === "play" ? [choice.card] : [],
        playerID,
        credentials: this.credentials[seat],
      },
    };
    this.sockets[seat].emit("update", action, this.states[seat]._stateID, this.matchID, playerID);
  }

  normalized(i) {
    const { G, ctx, _stateID } = this.states[i];
    const over = ctx.gameover !== undefined;
    return {
      rev: _stateID,
      deck: G.deck,
      counts: G.hands,
      scores: G.scores,
      toMove: over ? -1 : Number(ctx.currentPlayer),
      over,
      hand: G.hand,
    };
  }

  async check() {
    const problems = [];
    for (let i = 0; i < VIEWERS; i++) {
      const mine = this.states[i];
      const theirs = await this.sync(i);
      const pick = (s) => JSON.stringify(sorted({ G: s.G, ctx: s.ctx, id: s._stateID }));
      if (pick(mine) !== pick(theirs)) {
        problems.push(`viewer ${i}: state rebuilt from patches differs from the server's sync`);
      }
    }
    return problems;
  }

  async close() {
    for (const socket of this.sockets) socket.disconnect();
  }
}
