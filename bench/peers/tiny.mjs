// The tests' tiny card game (tests/games/tiny.py), rule for rule, for the peer servers.
//
// Twelve cards (1-6, twice) are shuffled into a face-down deck and each player is dealt two, a
// hidden hand. On a turn a player plays a card from the hand (public, scores its value) or,
// while the deck lasts, draws one (only the drawer learns which). The turn passes to the next
// seat that still has a card in hand or can draw; the match ends when the deck and every hand
// are empty. The choices of a seat, in the order Oasis lists them: each distinct card of the
// hand in ascending order, then `draw` while the deck lasts.
//
// Pure functions on a plain object, so boardgame.io (its `G`, through immer) and Colyseus (a
// server-side object mirrored into its schema) run the same rules.

export const CARDS = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6];
export const HAND = 2;

/** A new match: `shuffle(cards)` returns the cards in a random order (each server's own). */
export function setup(players, shuffle) {
  const deck = shuffle([...CARDS]);
  const hands = [];
  for (let i = 0; i < players; i++) hands.push([deck.pop(), deck.pop()]);
  return { deck, hands, scores: new Array(players).fill(0), toMove: 0, turns: 0 };
}

export function over(state) {
  return state.deck.length === 0 && state.hands.every((h) => h.length === 0);
}

/** The legal choices of the seat to move (none once the match is over). */
export function choices(state) {
  if (over(state)) return [];
  return choicesOf(state.hands[state.toMove], state.deck.length);
}

/** The choices a seat with `hand` has when the deck holds `deck` cards (its own view suffices). */
export function choicesOf(hand, deck) {
  const out = [...new Set(hand)].sort((a, b) => a - b).map((card) => ({ kind: "play", card }));
  if (deck > 0) out.push({ kind: "draw" });
  return out;
}

/** Why `choice` by `seat` is refused now, or null when it is legal. */
export function refusal(state, seat, choice) {
  if (over(state)) return "game_over";
  if (seat !== state.toMove) return "not_your_turn";
  if (choice === null || typeof choice !== "object") return "malformed_choice";
  if (choice.kind === "draw") return state.deck.length > 0 ? null : "illegal_choice";
  if (choice.kind === "play") return state.hands[seat].includes(choice.card) ? null : "illegal_choice";
  return "malformed_choice";
}

/** Apply a legal choice of the seat to move (check it with `refusal` first). */
export function apply(state, choice) {
  const seat = state.toMove;
  if (choice.kind === "draw") {
    state.hands[seat].push(state.deck.pop());
  } else {
    const hand = state.hands[seat];
    hand.splice(hand.indexOf(choice.card), 1);
    state.scores[seat] += choice.card;
  }
  state.turns += 1;
  const players = state.hands.length;
  for (let step = 1; step <= players; step++) {
    const next = (seat + step) % players;
    if (state.hands[next].length > 0 || state.deck.length > 0) {
      state.toMove = next;
      break;
    }
  }
}

/** A small seeded generator (mulberry32) for servers without one of their own. */
export function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates with `random()` in [0, 1). */
export function shuffleWith(random) {
  return (items) => {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  };
}
