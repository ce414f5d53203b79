// The boards of both games drawn in SVG, from the game's static data (GET /games/<name>) and the
// view alone, and the choices that have a place on them: a click or tap on that place chooses.
//
// A game's board module exports `{ draw(ctx), places(choice), confirm(choice), turnOf(view) }`:
// `draw` returns an SVG element whose places carry `data-place` keys ("hex:3,-2", "shop:sk5.0",
// "square:W7"...); `places` names the keys of a choice (none: the choice is in the list only);
// `confirm` says a choice is shown as a preview to confirm even when it is alone at its place
// (an Ishtar rotation: its footprint); `turnOf` names the turn a view is in (for replays).
// Nothing here knows a rule: where something is, what it costs and what it does all come from
// the data, the view and the choices' labels.

import { h, fill } from "./ui.js";

const NS = "http://www.w3.org/2000/svg";

/** `s("rect", {x: 1}, child)`: an SVG element; strings become text, `title` a tooltip. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "title") el.append(Object.assign(document.createElementNS(NS, "title"), { textContent: String(value) }));
    else if (key === "dataset") for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    else el.setAttribute(key, typeof value === "number" ? String(round(value)) : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function round(x) {
  return Math.round(x * 1000) / 1000;
}

/** Text at (x, y), centred; `size` in the board's units. */
export function label(x, y, text, size = 0.6, attrs = {}) {
  return s("text", { x, y, "font-size": size, "text-anchor": "middle", "dominant-baseline": "central", class: "lbl", ...attrs }, String(text));
}

const NAMED = {
  yellow: "#e3b51f", blue: "#2f6fca", pink: "#de5c9d", orange: "#e8741c", red: "#c8372d",
  green: "#3f9a48", purple: "#7a4bb3", white: "#f4f1ea", black: "#333", grey: "#999",
};
/** Seat colours where the game's data names none. */
export const SEAT_COLOURS = ["#c8372d", "#2f6fca", "#3f9a48", "#e3b51f"];

/** A CSS colour for a colour's name from the data ("pink"), or the name itself. */
export function paint(name) {
  return NAMED[name] ?? name;
}

const cache = new Map();
/** The game's static data (SPEC 21), fetched once per page. */
export function gameData(name) {
  if (!cache.has(name)) {
    const asked = fetch(`/games/${encodeURIComponent(name)}`).then((r) => {
      if (!r.ok) throw new Error(`GET /games/${name} answered ${r.status}`);
      return r.json();
    });
    asked.catch(() => cache.delete(name));
    cache.set(name, asked);
  }
  return cache.get(name);
}

/**
 * A board panel: the SVG of `board`, its places to click, and the strip that lists the choices
 * at the place picked (with a preview of the one under the pointer). `act(index)` chooses.
 */
export function boardPanel(board, act, options = {}) {
  const drawing = h("div", { class: "board-svg" });
  const strip = h("div", { class: "pick", id: "pick", hidden: true });
  const element = h("div", { class: "board", id: "board" }, strip, drawing);
  let last = null;
  let picked = null; // {key, indices}
  let preview = null; // an index into choices

  function update(state) {
    // state: {data, view, seats, choices (this seat may act on them now), seatName}
    last = state;
    const placeMap = new Map();
    state.choices.forEach((choice, i) => {
      for (const key of board.places(choice, state)) {
        if (!placeMap.has(key)) placeMap.set(key, []);
        placeMap.get(key).push(i);
      }
    });
    if (picked && !sameIndices(placeMap.get(picked.key), picked.indices, state.choices, picked.choices)) picked = null;
    if (preview !== null && !state.choices[preview]) preview = null;
    const svg = board.draw({ ...state, compact: Boolean(options.compact), preview: preview === null ? null : state.choices[preview], picked: picked?.key ?? null });
    const hits = s("g", { class: "hits" });
    for (const el of svg.querySelectorAll("[data-place]")) {
      const key = el.dataset.place;
      if (!placeMap.has(key) || el.closest(".hits")) continue;
      const hit = el.cloneNode(true);
      for (const text of hit.querySelectorAll("text, title")) text.remove();
      hit.classList.add("hit");
      if (picked?.key === key) hit.classList.add("picked");
      const indices = placeMap.get(key);
      hit.append(s("title", {}, indices.map((i) => state.choices[i].label ?? state.choices[i].kind).join("\n")));
      hit.addEventListener("click", () => pick(key, indices));
      hits.append(hit);
    }
    svg.append(hits);
    fill(drawing, svg);
    drawStrip();
  }

  function sameIndices(now, before, choicesNow, choicesBefore) {
    if (!now || !before || now.length !== before.length) return false;
    return now.every((i, n) => JSON.stringify(choicesNow[i]) === JSON.stringify(choicesBefore[before[n]]));
  }

  function pick(key, indices) {
    const choices = last.choices;
    if (indices.length === 1 && !board.confirm(choices[indices[0]])) {
      picked = null;
      preview = null;
      act(indices[0]);
      return;
    }
    picked = { key, indices, choices };
    preview = indices[0];
    update(last);
  }

  function hover(index) {
    if (preview === index) return;
    preview = index;
    update(last);
  }

  function drawStrip() {
    strip.hidden = !picked;
    if (!picked) return fill(strip);
    const choices = last.choices;
    fill(strip,
      h("p", { class: "hint" }, picked.indices.length > 1 ? "Choose one here:" : "Confirm:"),
      h("div", { class: "pick-list" }, picked.indices.map((i) => h("button", {
        type: "button", class: `pick-choice ${i === preview ? "previewed" : ""}`, dataset: { index: i },
        onmouseenter: () => hover(i), onfocus: () => hover(i),
        onclick: () => { picked = null; preview = null; act(i); },
      }, choices[i].label ?? choices[i].kind))),
      h("button", { type: "button", class: "quiet", id: "pick-cancel", onclick: () => { picked = null; preview = null; update(last); } }, "Cancel"));
  }

  return {
    element,
    update,
    /** Show `index` of the choices on the board (the choice list's hover), or nothing (null). */
    preview(index) {
      if (preview === index || !last) return;
      preview = index;
      update(last);
    },
  };
}
