// The tiny card game on boardgame.io: its own `Server` (Koa, the lobby API, socket.io), a
// `playerView` that hides every hand but the viewer's and the deck, and `deltaState`, so each
// viewer gets an RFC 6902 patch of its own view after each move (not the whole state).
//
//     node bench/peers/bgio_server.mjs --port 8000
//
// Storage is boardgame.io's default, in memory. Its randomness is its own (the `random`
// plugin, seeded per match); the rules are bench/peers/tiny.mjs.

import { createRequire } from "node:module";
import * as tiny from "./tiny.mjs";

const require = createRequire(import.meta.url);
const { Server } = require("boardgame.io/server");
const { INVALID_MOVE } = require("boardgame.io/core");

function move(kind) {
  return ({ G, playerID }, card) => {
    const choice = kind === "draw" ? { kind } : { kind, card };
    if (tiny.refusal(G, Number(playerID), choice) !== null) return INVALID_MOVE;
    tiny.apply(G, choice);
  };
}

export const Tiny = {
  name: "tiny",
  minPlayers: 2,
  maxPlayers: 4,
  setup: ({ ctx, random }) => tiny.setup(ctx.numPlayers, (cards) => random.Shuffle(cards)),
  moves: { play: move("play"), draw: move("draw") },
  // One move per turn; the rules say who is next (a seat without cards is skipped).
  turn: { minMoves: 1, maxMoves: 1, order: { first: () => 0, next: ({ G }) => G.toMove } },
  endIf: ({ G }) => (tiny.over(G) ? { scores: [...G.scores] } : undefined),
  playerView: ({ G, playerID }) => {
    const seat = playerID === null || playerID === undefined ? -1 : Number(playerID);
    return {
      deck: G.deck.length,
      hands: G.hands.map((h) => h.length),
      scores: G.scores,
      toMove: G.toMove,
      turns: G.turns,
      hand: seat >= 0 && seat < G.hands.length ? [...G.hands[seat]].sort((a, b) => a - b) : null,
    };
  },
  deltaState: true,
};

function port() {
  const at = process.argv.indexOf("--port");
  return at > 0 ? Number(process.argv[at + 1]) : 8000;
}

const server = Server({ games: [Tiny], origins: ["http://127.0.0.1"] });
await server.run({ port: port(), callback: () => console.log(`boardgame.io listening on ${port()}`) });
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
