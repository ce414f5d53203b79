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
//
// Paced phases and the tail (bench/peers/README.md, "The paced tail"): with `stagger: n` each
// room first plays a random number (below n) of choices at once, unmeasured, then starts its
// schedule, so that matches dealt together end spread out; a slot that falls while the room's
// clients set their next match up is dropped and counted (`carry: true` keeps it waiting for the
// match, as the harness did before, which charged the set-up to the first choice of the match).
// Each result also says what the generator measured of itself: per sample how long its slot
// waited here before the choice went out and whether it was carried over a set-up, the set-ups'
// durations and each request's time to its answer (Oasis), the event-loop delay of this process
// and its GC pauses over the window.

import { createInterface } from "node:readline";
import { PerformanceObserver, monitorEventLoopDelay } from "node:perf_hooks";
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
    // What the harness itself adds (bench/peers/README.md, "the paced tail"): per latency
    // sample, how long its slot waited in this process before the choice was sent, and whether
    // its slot fell while the room was still setting its match up; the set-ups' own durations;
    // the slots dropped because they fell in a set-up; this process's GC pauses.
    this.waits = [];
    this.carried = [];
    this.setups = [];
    this.dropped = 0;
    this.gcPauses = [];
    /** Seconds from request to answer per request type (the clients that time them). */
    this.steps = {};
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
    this.sentNow = new Map();
    this.setupEnded = 0;
    /** Paced slots that fall during a match's set-up: kept as dues (false: dropped). */
    this.carry = false;
    this.skip = null;
    this.interval = 0;
    this.end = 0;
  }

  async open() {
    await this.client.open();
    this.started();
  }

  started() {
    this.finished = false;
    this.sentAt.clear();
    this.sentNow.clear();
    this.seen.clear();
    this.setupEnded = now();
    if (!this.carry && this.dues.length > 0) {
      // A slot that fell while the room's clients were setting the match up is no choice of
      // the match: it is dropped (and counted), the match's clock starts at the next slot.
      if (this.tally.measuring) this.tally.dropped += this.dues.length;
      this.dues = [];
    }
    this.actor = null;
    for (let i = 0; i < SEATS; i++) {
      if (this.client.mayAct(i)) {
        this.actor = i;
        this.rev = this.client.rev(i);
      }
    }
  }

  async restart() {
    const began = now();
    try {
      await this.client.newMatch();
      this.started();
      this.tally.matches += 1;
      if (this.tally.measuring) this.tally.setups.push(now() - began);
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
        const wrote = this.sentNow.get(from);
        this.sentAt.delete(from);
        this.sentNow.delete(from);
        if (tally.measuring) {
          tally.actions += 1;
          tally.latencies.push(arrived - sent);
          tally.waits.push(wrote - sent);
          tally.carried.push(sent < this.setupEnded ? 1 : 0);
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
    if (this.skip !== null) {
      // Paced with a head start: this room's first `skip` choices go at once, unmeasured, so
      // that the rooms' matches (all dealt at the same moment) end and restart spread over
      // time instead of all together; then its schedule starts.
      if (this.skip === 0) {
        this.skip = null;
        this.paced = true;
        this.pace(now(), this.interval, this.end);
        return;
      }
      this.skip -= 1;
    }
    this.act(now());
  }

  act(started) {
    const seat = this.actor;
    this.actor = null;
    const count = this.client.choices(seat);
    this.sentAt.set(this.rev, started);
    this.sentNow.set(this.rev, now());
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

const round = (x) => Math.round(x * 1e6) / 1e6;

async function runPhase(rooms, tally, phase) {
  const playing = rooms.slice(0, phase.rooms);
  const interval = phase.interval ?? 0.25;
  tally.reset();
  const start = now();
  const end = start + phase.warmup + phase.seconds;
  for (const room of playing) {
    room.active = true;
    room.paced = phase.mode === "paced";
    room.carry = phase.carry === true;
    room.dues = [];
    room.interval = interval;
    room.end = end;
    room.skip = null;
    if (room.paced && phase.stagger) {
      room.paced = false;
      room.skip = Math.floor(room.random() * phase.stagger);
      room.kick();
    } else if (room.paced) room.pace(start, interval, end);
    else room.kick();
  }
  await sleep(phase.warmup);
  // This process's event-loop delay (how late its timers and socket callbacks run) and GC
  // pauses over the window: time charged to the server's latency that is the generator's own.
  const lag = monitorEventLoopDelay({ resolution: 5 });
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) tally.gcPauses.push(entry.duration / 1e3);
  });
  gcs.observe({ entryTypes: ["gc"] });
  lag.enable();
  tally.measuring = true;
  const measured = now();
  await sleep(end - now());
  tally.measuring = false;
  lag.disable();
  gcs.disconnect();
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
    latencies: tally.latencies.map(round),
    waits: tally.waits.map(round),
    carried: tally.carried,
    setups: tally.setups.map(round),
    dropped: tally.dropped,
    steps: Object.fromEntries(
      Object.entries(tally.steps).map(([k, v]) => [k, { n: v.length, p50: percentile(v, 0.5), p99: percentile(v, 0.99) }]),
    ),
    gc_pauses: tally.gcPauses.map(round),
    loop_lag: {
      p50: lag.percentile(50) / 1e9,
      p99: lag.percentile(99) / 1e9,
      max: lag.max / 1e9,
      mean: lag.mean / 1e9,
    },
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
  "oasis-rematch": () => import("./clients/oasis.mjs").then((m) => ({ Driver: m.RematchDriver })),
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
