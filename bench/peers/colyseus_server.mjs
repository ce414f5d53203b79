// The tiny card game on Colyseus: one room per match with `@colyseus/schema` state; each seat's
// hand is a `.view()` field that only the `StateView` of that seat's client contains, so the
// spectators (no view) and the other seats never receive it.
//
//     node bench/peers/colyseus_server.mjs --port 2567
//
// A room takes 4 seats then 2 spectators (`{spectator: true}` in the join options); a seat acts
// with the message `act` carrying the choice (`{kind: "play", card}` or `{kind: "draw"}`). Once a
// match is over, seat 0 may send `rematch`: the room deals a new match to the same clients
// (`match` counts them), the cheap way to play again that Colyseus allows and Oasis does not.
// Patches go out right after each accepted choice (`broadcastPatch()`, `patchRate = null`), not
// on Colyseus's default 50 ms tick: a board game has nothing to batch, and a tick would only add
// latency (Oasis and boardgame.io also send at once).

import { Room, Server } from "@colyseus/core";
import { schema, StateView, t } from "@colyseus/schema";
import { WebSocketTransport } from "@colyseus/ws-transport";
import * as tiny from "./tiny.mjs";

const SEATS = 4;
const SPECTATORS = 2;

export const Seat = schema(
  { hand: t.array("uint8").view(), count: t.uint8(), score: t.uint8() },
  "Seat",
);
export const TinyState = schema(
  {
    rev: t.uint32(),
    match: t.uint32(),
    deck: t.uint8(),
    toMove: t.int8(),
    over: t.boolean(),
    seats: t.array(Seat),
  },
  "TinyState",
);

let matches = 0;

export class TinyRoom extends Room {
  maxClients = SEATS + SPECTATORS;
  patchRate = null;

  onCreate() {
    this.taken = 0;
    const state = new TinyState();
    state.rev = 0;
    state.match = 0;
    for (let i = 0; i < SEATS; i++) state.seats.push(new Seat());
    this.state = state;
    this.deal();
    this.onMessage("act", (client, choice) => this.act(client, choice));
    this.onMessage("rematch", (client) => {
      if (client.userData?.seat !== 0 || !this.state.over) return;
      this.deal();
      this.broadcastPatch();
    });
  }

  deal() {
    matches += 1;
    this.game = tiny.setup(SEATS, tiny.shuffleWith(tiny.generator(matches * 7919 + 17)));
    this.state.match += 1;
    this.mirror();
  }

  onJoin(client, options) {
    if (options?.spectator || this.taken >= SEATS) {
      client.userData = { seat: -1 };
      return;
    }
    const seat = this.taken++;
    client.userData = { seat };
    client.view = new StateView();
    client.view.add(this.state.seats[seat]);
  }

  act(client, choice) {
    const seat = client.userData?.seat ?? -1;
    const why = seat < 0 ? "not_allowed" : tiny.refusal(this.game, seat, choice);
    if (why !== null) {
      client.send("refused", { code: why });
      return;
    }
    tiny.apply(this.game, choice);
    this.state.rev += 1;
    this.mirror();
    this.broadcastPatch();
  }

  /** Copy the rules' state into the schema (only what changed is encoded). */
  mirror() {
    const { game, state } = this;
    state.deck = game.deck.length;
    state.toMove = game.toMove;
    state.over = tiny.over(game);
    game.hands.forEach((hand, i) => {
      const seat = state.seats[i];
      const sorted = [...hand].sort((a, b) => a - b);
      if (seat.hand.length !== sorted.length || sorted.some((c, k) => seat.hand[k] !== c)) {
        seat.hand.splice(0, seat.hand.length, ...sorted);
      }
      seat.count = hand.length;
      seat.score = game.scores[i];
    });
  }
}

function port() {
  const at = process.argv.indexOf("--port");
  return at > 0 ? Number(process.argv[at + 1]) : 2567;
}

const server = new Server({ transport: new WebSocketTransport(), greet: false });
server.define("tiny", TinyRoom);
await server.listen(port(), "127.0.0.1");
console.log(`colyseus listening on ${port()}`);
