// Small helpers of the pages: building DOM, and words for what the server sends (choices,
// events, decisions, errors). The views carry `label`, `prompt` and `text` (SPEC 1.1), which
// are shown as they are; a server of minor 0 (or a game without texts) gets these readable
// renderings of the maps instead.

import { Float, ServerError, ConnectionLost } from "./oasis.js";

/** `h("p", {class: "x", onclick: f}, "text", child)`: an element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** `choose_tile` -> "Choose tile". */
export function words(name) {
  const text = String(name ?? "").replaceAll("_", " ").trim();
  return text ? text[0].toUpperCase() + text.slice(1) : "";
}

/** A value of a view in words: (3, -2) for pairs, "none" for null, nested maps inline. */
export function show(value, seats = []) {
  if (value === null || value === undefined) return "none";
  if (value instanceof Float) return String(value.value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return `(${value.map((v) => show(v, seats)).join(", ")})`;
  if (typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${words(k).toLowerCase()} ${show(v, seats)}`)
      .join(", ")}}`;
  }
  return String(value);
}

function seatName(seats, seat) {
  const found = seats.find((s) => s.seat === seat);
  return found?.name ? found.name : `seat ${Number(seat) + 1}`;
}

/** A legal choice as people read it: its `label` when the server gives one, else its kind and
 * arguments in words ("Place: tile 17, at (3, -2), rotation 4"). */
export function choiceText(choice, seats = []) {
  if (typeof choice?.label === "string" && choice.label) return choice.label;
  const args = Object.entries(choice ?? {})
    .filter(([k]) => k !== "kind" && k !== "label")
    .map(([k, v]) => (k === "seat" ? `seat ${seatName(seats, v)}` : `${words(k).toLowerCase()} ${show(v, seats)}`));
  const kind = words(choice?.kind ?? "choice");
  return args.length ? `${kind}: ${args.join(", ")}` : kind;
}

/** An event as people read it: its `text`, else who did what ("ann: took tile 12"). */
export function eventText(event, seats = []) {
  if (typeof event?.text === "string" && event.text) return event.text;
  const who = Number.isInteger(event?.seat) ? `${seatName(seats, event.seat)}: ` : "";
  const args = Object.entries(event ?? {})
    .filter(([k]) => k !== "kind" && k !== "seat" && k !== "text")
    .map(([k, v]) => `${words(k).toLowerCase()} ${show(v, seats)}`);
  return `${who}${words(event?.kind ?? "event").toLowerCase()}${args.length ? ` (${args.join(", ")})` : ""}`;
}

/** What the deciding seat is asked: the turn's `prompt`, else its decision in words. */
export function promptText(turn, seats = []) {
  if (!turn) return "";
  const name = seatName(seats, turn.seat);
  if (typeof turn.prompt === "string" && turn.prompt) return `${name}: ${turn.prompt}`;
  return `${name} must decide: ${words(turn.decision).toLowerCase()}`;
}

export { seatName };

/** Milliseconds as m:ss (h:mm:ss past an hour). */
export function clockText(ms) {
  const total = Math.max(0, Math.ceil(Number(ms) / 1000));
  const s = total % 60;
  const m = Math.floor(total / 60) % 60;
  const hours = Math.floor(total / 3600);
  const mm = hours ? String(m).padStart(2, "0") : String(m);
  return `${hours ? `${hours}:` : ""}${mm}:${String(s).padStart(2, "0")}`;
}

const EXPLAIN = {
  stale_rev: "The match moved on before your choice arrived; choose again.",
  not_your_turn: "It is not your turn.",
  illegal_choice: "That choice is not legal now",
  game_over: "The match is over.",
  not_allowed: "Not allowed now",
  not_found: "No such room (it may have finished and closed, or the id is mistyped).",
  room_full: "That room has no free seat.",
  bad_token: "This browser's seat token does not open a seat in that room.",
  unavailable: "The server cannot take moves right now; try again in a moment.",
  storage_lost: "The server's storage lost this match; it cannot go on. Start a new one.",
  bad_options: "The server refused those settings",
  slow_down: "Slow down: too many messages.",
  rate_limited: "Too many messages too fast.",
  internal: "A server bug (in its log): the board shows whether your move was made.",
};

/** A sentence for the person in front of the page, for any error. */
export function explain(err) {
  if (err instanceof ServerError) {
    const base = EXPLAIN[err.code];
    if (!base) return `The server refused: ${err.serverMessage} (${err.code}).`;
    return base.endsWith(".") ? base : `${base}: ${err.serverMessage}.`;
  }
  if (err instanceof ConnectionLost) return `Connection problem: ${err.message}.`;
  return String(err?.message ?? err);
}

/** A view part (the game's public state, a seat's secrets) as a readable nested list. */
export function tree(value, depth = 0) {
  if (value === null || typeof value !== "object" || value instanceof Float) {
    return h("span", { class: "scalar" }, show(value));
  }
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object" || v instanceof Float)) {
      return h("span", { class: "scalar" }, value.length ? value.map((v) => show(v)).join(", ") : "none");
    }
    return h("ol", { class: "tree", start: 0 }, value.map((v) => h("li", {}, tree(v, depth + 1))));
  }
  const entries = Object.entries(value);
  if (!entries.length) return h("span", { class: "scalar" }, "none");
  return h(
    "dl",
    { class: "tree" },
    entries.map(([k, v]) => [h("dt", {}, words(k)), h("dd", {}, tree(v, depth + 1))]),
  );
}
