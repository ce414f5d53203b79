// Colyseus's side of the load generator: its own client SDK (@colyseus/sdk), which speaks its
// matchmaking (HTTP) and room protocol (WebSocket, schema-encoded state patches) and keeps each
// client's decoded copy of the room's state.
//
// A match is one Colyseus room: seat 0 `create`s it, seats 1-3 then the two spectators
// (`{spectator: true}`) `joinById`, one after the other, so each seat's index is its join order.
// A choice is the room message `act` with the choice; every client decodes the patch that
// follows and sees the state's `rev` move on. A new match: every client `leave`s its room
// (Colyseus's clients live in one room, on one connection each) and the same again. With
// `RematchDriver` (kind `colyseus-rematch`) a new match is dealt in the same room instead: seat 0
// sends `rematch` and every client waits for the new `match` (no matchmaking, no new connection).

import { Client } from "@colyseus/sdk";
import { choicesOf } from "../tiny.mjs";
import { SEATS, VIEWERS, now } from "../common.mjs";

const clients = new Map();

export class Driver {
  constructor(room, url) {
    this.room = room;
    if (!clients.has(url)) clients.set(url, new Client(url));
    this.client = clients.get(url);
    this.rooms = [];
    this.revs = new Array(VIEWERS).fill(null);
    this.lastBytes = new Array(VIEWERS).fill(0);
    this.waiting = null;
  }

  async open() {
    await this.start();
  }

  async newMatch() {
    const old = this.rooms;
    this.rooms = [];
    await Promise.all(old.map((r) => r.leave()));
    await this.start();
  }

  async start() {
    this.revs.fill(null);
    const first = await this.client.create("tiny", {});
    this.attach(0, first);
    for (let i = 1; i < VIEWERS; i++) {
      const joined = await this.client.joinById(first.roomId, { spectator: i >= SEATS });
      this.attach(i, joined);
    }
    // Every client has its full state once its first state frame has come.
    for (let k = 0; k < 200 && this.revs.some((r) => r === null); k++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (this.revs.some((r) => r === null)) throw new Error("no state after joining");
  }

  attach(i, room) {
    this.rooms[i] = room;
    const events = room.connection.events;
    const handler = events.onmessage;
    events.onmessage = (event) => {
      const bytes = event.data.byteLength;
      this.lastBytes[i] = bytes;
      this.room.received(bytes);
      handler(event);
    };
    room.onStateChange((state) => this.changed(i, room, state));
    room.onMessage("refused", (message) => this.room.refused(message.code));
    if (room.state?.rev !== undefined) this.revs[i] = room.state.rev;
  }

  changed(i, room, state) {
    if (this.rooms[i] !== room) return;
    if (this.waiting !== null) this.waiting();
    if (state.rev === undefined) return;
    const from = this.revs[i];
    this.revs[i] = state.rev;
    if (from !== null && state.rev !== from) this.room.delivered(i, from, this.lastBytes[i], now());
  }

  state(i) {
    return this.rooms[i].state;
  }

  over(i) {
    return this.state(i).over;
  }

  mayAct(i) {
    const state = this.state(i);
    return !state.over && state.toMove === i;
  }

  rev(i) {
    return this.revs[i];
  }

  choiceList(i) {
    const state = this.state(i);
    return choicesOf([...state.seats[i].hand], state.deck);
  }

  choices(i) {
    return this.choiceList(i).length;
  }

  act(seat, index) {
    this.rooms[seat].send("act", this.choiceList(seat)[index]);
  }

  normalized(i) {
    const state = this.state(i);
    const seats = [...state.seats];
    return {
      rev: state.rev,
      deck: state.deck,
      counts: seats.map((s) => s.count),
      scores: seats.map((s) => s.score),
      toMove: state.over ? -1 : state.toMove,
      over: state.over,
      hand: i < SEATS ? [...(seats[i].hand ?? [])] : null,
      foreign: seats.flatMap((s, k) => (k === i || s.hand === undefined ? [] : [...s.hand])),
    };
  }

  async check() {
    return [];
  }

  async close() {
    await Promise.all(this.rooms.map((r) => r.leave().catch(() => {})));
  }
}

export class RematchDriver extends Driver {
  async newMatch() {
    const next = this.state(0).match + 1;
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("rematch: no new match")), 20_000);
      this.waiting = () => {
        if (this.rooms.every((r) => r.state.match === next && !r.state.over)) {
          clearTimeout(timer);
          this.waiting = null;
          resolve();
        }
      };
      this.rooms[0].send("rematch");
    });
  }
}
