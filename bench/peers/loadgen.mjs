// The one load generator of the peer comparison: rooms of 4 seats + 2 spectators playing the
// tiny card game against Oasis, boardgame.io or Colyseus, each through its own client protocol
// (clients/oasis.mjs, clients/bgio.mjs, clients/colyseus.mjs).
//
//     node bench/peers/loadgen.mjs --kind oasis --url ws://127.0.0.1:8765/ --rooms 100
//
// Every room is six real connections on loopback, all in this process, so one clock times a
// choice and its six deliveries. Each viewer keeps its own view of the match and updates it from
// what its server sends; the seat whose view says it must decide picks a random legal choice
// (the same list in the same order everywhere: each distinct card of its hand, then `draw`
// while the deck lasts) and sends it. When a match is over the room's clients start a new one
// the way that framework's clients do (bench/peers/README.md).
//
// Talking to the runner (bench/peers/run.py), one line each way, as bench/loadgen.py does: the
// worker sets every room up and prints `ready {...}`; then `go {phase}` runs a phase and prints
// `result {...}`; `check` compares every viewer's view with its room's other viewers and, where
// the protocol has a way to ask (Oasis `sync`, boardgame.io `sync`), with the server's own view,
// and prints `checked {...}`; `quit` (or the end of stdin) ends it. A phase is `{"mode":
// "saturation" | "paced", "rooms": n, "warmup": s, "seconds": s, "interval": s}`, the meaning of
// bench/loadgen.py: saturation sends each room's next choice as soon as its actor sees its turn;
// paced sends one choice per room every `interval` seconds on a fixed schedule from a random
// phase, latency counted from the scheduled instant. Latency is from a choice to the moment the
// last of the room's six viewers has the revision it made.

import { createInterface } from "node:readline";
import { SEATS, VIEWERS, now, sleep } from "./common.mjs";
import { generator } from "./tiny.mjs";

const CONNECT_ROOMS = 5;
const RETRY_AFTER = 0.1;

class Tally {
  constructor() {
    this.reset();
  }

  reset() {
    this.measuring = false;
    this.actions = 0;
    this.latencies = [];
    this.patchSizes = new Map();
    this.bytesIn = 0;
    this.framesIn = 0;
    this.errors = {};
    this.late = 0;
    this.matches = 0;
  }

  error(code) {
    this.errors[code] = (this.errors[code] ?? 0) + 1;
  }
}

/** One room's six viewers, whatever the server: the bookkeeping of choices and deliveries. */
class RoomBots {
  constructor(Driver, url, name, tally, seed) {
    this.name = name;
    this.tally = tally;
    this.random = generator(seed);
    this.client = new Driver(this, url, name);
    this.rev = 0;
    this.sentAt = new Map();
    this.seen = new Map();
    this.actor = null;
    this.active = false;
    this.paced = false;
    this.dues = [];
    this.finished = false;
    this.restarting = false;
  }

  async open() {
    await this.client.open();
    this.started();
  }

  started() {
    this.finished = false;
    this.sentAt.clear();
    this.seen.clear();
    this.actor = null;
    for (let i = 0; i < SEATS; i++) {
      if (this.client.mayAct(i)) {
        this.actor = i;
        this.rev = this.client.rev(i);
      }
    }
  }

  async restart() {
    try {
      await this.client.newMatch();
      this.started();
      this.tally.matches += 1;
    } catch (error) {
      // Counted, and tried again in a moment (a paced room also tries at its next slot).
      this.tally.error(`restart:${error?.message?.slice(0, 80) ?? error}`);
      this.restarting = false;
      setTimeout(() => this.kick(), 1000);
      return;
    }
    this.restarting = false;
    this.kick();
  }

  /** Every frame a viewer receives (for the bytes per action). */
  received(bytes) {
    if (this.tally.measuring) {
      this.tally.bytesIn += bytes;
      this.tally.framesIn += 1;
    }
  }

  /** Viewer `index` has applied the revision made from revision `from` (`bytes`: its frame). */
  delivered(index, from, bytes, arrived) {
    const tally = this.tally;
    if (tally.measuring) tally.patchSizes.set(bytes, (tally.patchSizes.get(bytes) ?? 0) + 1);
    const count = (this.seen.get(from) ?? 0) + 1;
    if (count === VIEWERS) {
      this.seen.delete(from);
      const sent = this.sentAt.get(from);
      if (sent !== undefined) {
        this.sentAt.delete(from);
        if (tally.measuring) {
          tally.actions += 1;
          tally.latencies.push(arrived - sent);
        }
      }
    } else {
      this.seen.set(from, count);
    }
    if (index >= SEATS) return;
    if (this.client.over(index)) {
      if (!this.finished) {
        this.finished = true;
        this.actor = null;
      }
      if (index === 0) this.kick();
      return;
    }
    if (this.client.mayAct(index)) {
      this.rev = this.client.rev(index);
      this.actor = index;
      this.kick();
    }
  }

  /** Viewer `index` replaced its view by the server's (after a gap): the room goes on from it. */
  resynced(index) {
    this.tally.error("resync");
    this.seen.clear();
    if (index < SEATS && this.client.mayAct(index)) {
      this.rev = this.client.rev(index);
      this.actor = index;
      this.kick();
    }
  }

  /** The server refused a choice: say so and choose again from the views after a moment. */
  refused(code) {
    this.tally.error(code);
    setTimeout(() => {
      for (let i = 0; i < SEATS; i++) {
        if (this.client.mayAct(i)) {
          this.rev = this.client.rev(i);
          this.actor = i;
          this.kick();
          return;
        }
      }
    }, RETRY_AFTER * 1000);
  }

  kick() {
    if (!this.active || this.restarting) return;
    if (this.finished) {
      this.restarting = true;
      this.restart();
      return;
    }
    if (this.actor === null) return;
    if (this.paced) {
      if (this.dues.length > 0) this.act(this.dues.shift());
      return;
    }
    this.act(now());
  }

  act(started) {
    const seat = this.actor;
    this.actor = null;
    const count = this.client.choices(seat);
    this.sentAt.set(this.rev, started);
    this.client.act(seat, Math.floor(this.random() * count));
  }

  async pace(start, interval, end) {
    let slot = start + this.random() * interval;
    while (slot < end && this.active) {
      const delay = slot - now();
      if (delay > 0) await sleep(delay);
      if (!this.active) return;
      if (this.dues.length > 0 && this.tally.measuring) this.tally.late += 1;
      this.dues.push(slot);
      this.kick();
      slot += interval;
    }
  }

  /** What is wrong with this room's views now (an empty list: nothing). */
  async check() {
    const problems = [];
    const views = [];
    for (let i = 0; i < VIEWERS; i++) views.push(this.client.normalized(i));
    const shared = (v) => JSON.stringify([v.rev, v.deck, v.counts, v.scores, v.toMove, v.over]);
    for (let i = 1; i < VIEWERS; i++) {
      if (shared(views[i]) !== shared(views[0])) {
        problems.push(`${this.name}: viewer ${i} ${shared(views[i])} != viewer 0 ${shared(views[0])}`);
      }
    }
    views.forEach((v, i) => {
      if (i < SEATS && (v.hand === null || v.hand.length !== v.counts[i])) {
        problems.push(`${this.name}: seat ${i} holds ${JSON.stringify(v.hand)}, count ${v.counts[i]}`);
      }
      if (v.foreign !== undefined && v.foreign.length > 0) {
        problems.push(`${this.name}: viewer ${i} sees cards of other hands ${v.foreign}`);
      }
      if (i >= SEATS && v.hand !== null && v.hand.length > 0) {
        problems.push(`${this.name}: spectator ${i} sees a hand ${JSON.stringify(v.hand)}`);
      }
      const played = v.scores.reduce((a, b) => a + b, 0);
      if (played + (v.hand ?? []).reduce((a, b) => a + b, 0) > 42) {
        problems.push(`${this.name}: viewer ${i} counts more than the 42 points of the deck`);
      }
    });
    for (const problem of await this.client.check()) problems.push(`${this.name}: ${problem}`);
    return problems;
  }
}

function percentile(values, q) {
  if (values.length === 0) return null;
  const ordered = [...values].sort((a, b) => a - b);
  return ordered[Math.min(ordered.length - 1, Math.floor(q * ordered.length))];
}

async function runPhase(rooms, tally, phase) {
  const playing = rooms.slice(0, phase.rooms);
  const interval = phase.interval ?? 0.25;
  tally.reset();
  const start = now();
  const end = start + phase.warmup + phase.seconds;
  for (const room of playing) {
    room.active = true;
    room.paced = phase.mode === "paced";
    room.dues = [];
    if (room.paced) room.pace(start, interval, end);
    else room.kick();
  }
  await sleep(phase.warmup);
  tally.measuring = true;
  const measured = now();
  await sleep(end - now());
  tally.measuring = false;
  const elapsed = now() - measured;
  for (const room of playing) room.active = false;
  // Let what is in flight land (and matches being set up finish), so the next phase or the
  // check starts from quiet rooms.
  for (let i = 0; i < 100; i++) {
    if (playing.every((r) => r.sentAt.size === 0 && !r.restarting)) break;
    await sleep(0.05);
  }
  for (const room of playing) {
    room.sentAt.clear();
    room.seen.clear();
  }
  return {
    mode: phase.mode,
    rooms: playing.length,
    seconds: elapsed,
    actions: tally.actions,
    latencies: tally.latencies.map((x) => Math.round(x * 1e6) / 1e6),
    patch_sizes: Object.fromEntries(tally.patchSizes),
    bytes_in: tally.bytesIn,
    frames_in: tally.framesIn,
    errors: tally.errors,
    late: tally.late,
    matches: tally.matches,
    p99_here: percentile(tally.latencies, 0.99),
  };
}

async function openRooms(Driver, args, tally) {
  const rooms = [];
  for (let i = 0; i < args.rooms; i++) {
    const index = args.first + i;
    rooms.push(new RoomBots(Driver, args.url, `r${index}`, tally, args.seed * 100003 + index));
  }
  let next = 0;
  const setupErrors = [];
  async function worker() {
    while (next < rooms.length) {
      const room = rooms[next++];
      for (let attempt = 0; ; attempt++) {
        try {
          await room.open();
          break;
        } catch (error) {
          setupErrors.push(String(error?.message ?? error).slice(0, 300));
          if (attempt >= 2) throw error;
          await room.client.close();
          room.client = new Driver(room, args.url, room.name);
        }
      }
    }
  }
  await Promise.all(Array.from({ length: CONNECT_ROOMS }, worker));
  return { rooms, setupErrors };
}

const DRIVERS = {
  oasis: () => import("./clients/oasis.mjs"),
  bgio: () => import("./clients/bgio.mjs"),
  colyseus: () => import("./clients/colyseus.mjs"),
  "colyseus-rematch": () =>
    import("./clients/colyseus.mjs").then((m) => ({ Driver: m.RematchDriver })),
};

function parse(argv) {
  const args = { kind: "", url: "", rooms: 10, first: 0, seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, "");
    if (!(name in args)) throw new Error(`unknown flag ${argv[i]}`);
    args[name] = typeof args[name] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!(args.kind in DRIVERS)) throw new Error(`--kind: one of ${Object.keys(DRIVERS)}`);
  if (!/^(ws|http):\/\/(127\.0\.0\.1|localhost):/.test(args.url)) {
    throw new Error("the load only ever goes to loopback");
  }
  return args;
}

function say(kind, payload) {
  process.stdout.write(`${kind} ${JSON.stringify(payload)}\n`);
}

async function main() {
  const args = parse(process.argv.slice(2));
  const { Driver } = await DRIVERS[args.kind]();
  const tally = new Tally();
  const started = now();
  const { rooms, setupErrors } = await openRooms(Driver, args, tally);
  say("ready", { rooms: rooms.length, setup: now() - started, setup_errors: setupErrors });
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.startsWith("go ")) {
      say("result", await runPhase(rooms, tally, JSON.parse(line.slice(3))));
    } else if (line === "check") {
      // Matches still being set up finish first (the rooms are idle between phases).
      for (let i = 0; i < 600 && rooms.some((r) => r.restarting); i++) await sleep(0.05);
      const problems = [];
      let checked = 0;
      for (const room of rooms) {
        if (room.restarting) continue;
        checked += 1;
        try {
          for (const p of await room.check()) problems.push(p);
        } catch (error) {
          problems.push(`${room.name}: cannot be checked: ${error?.message ?? error}`);
        }
      }
      say("checked", { rooms: checked, problems: problems.slice(0, 50), count: problems.length });
    } else {
      break;
    }
  }
  // No closing handshakes for hundreds of sockets: the runner stops the server.
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
