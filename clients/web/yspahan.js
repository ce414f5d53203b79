// Yspahan's board in SVG: the steward's cross of squares with the four quarters around it (each
// souk a group of shops holding the players' goods, every shop beside the squares that face it),
// the steward; beside it the tower with the day's dice, the caravan, the buildings, each player's
// gold, camels, buildings and cards, and the seat's own hand. Where a shop goes comes from the
// data alone: `shops[].faced_by` puts a shop next to its squares, on the side of its quarter (the
// side of the arms whose squares face that quarter); a shop no square faces joins its souk's
// other shops, away from the path.

import { s, label, SEAT_COLOURS } from "./boards.js";

const ARM = { west: [-1, 0], east: [1, 0], north: [0, -1], south: [0, 1], centre: [0, 0] };
const QUARTER_FILL = ["#f2dfb6", "#e6d0ec", "#d6e6f2", "#dcefd6"];
const QUARTER_EDGE = ["#b58a2e", "#8a5aa0", "#3f7aa8", "#4d8a3f"];

export function seatColour(_data, seat) {
  return SEAT_COLOURS[seat % SEAT_COLOURS.length];
}

const layouts = new WeakMap();

/** Grid positions of the squares and shops, worked out once per data document. */
export function layout(data) {
  if (layouts.has(data)) return layouts.get(data);
  const squares = new Map();
  for (const sq of data.steward?.squares ?? []) {
    const [dx, dy] = ARM[sq.arm] ?? [0, 0];
    squares.set(sq.square, { ...sq, x: dx * sq.distance, y: dy * sq.distance });
  }
  const shopOf = new Map((data.shops ?? []).map((shop) => [shop.shop, shop]));
  const soukOf = new Map((data.souks ?? []).map((souk) => [souk.souk, souk]));
  // A quarter's side: towards the arms whose squares face its shops.
  const side = new Map();
  for (const quarter of data.quarters ?? []) {
    let sx = 0;
    let sy = 0;
    for (const soukId of quarter.souks) {
      for (const shopId of soukOf.get(soukId)?.shops ?? []) {
        for (const sqId of shopOf.get(shopId)?.faced_by ?? []) {
          const sq = squares.get(sqId);
          if (sq) {
            sx += Math.sign(sq.x);
            sy += Math.sign(sq.y);
          }
        }
      }
    }
    side.set(quarter.quarter, [Math.sign(sx) || 1, Math.sign(sy) || 1]);
  }
  const taken = new Set([...squares.values()].map((sq) => `${sq.x},${sq.y}`));
  const shops = new Map();
  const place = (id, x, y) => {
    shops.set(id, { x, y });
    taken.add(`${x},${y}`);
  };
  for (const shop of data.shops ?? []) {
    const quarter = soukOf.get(shop.souk)?.quarter;
    const [qx, qy] = side.get(quarter) ?? [1, 1];
    for (const sqId of shop.faced_by ?? []) {
      const sq = squares.get(sqId);
      if (!sq || shops.has(shop.shop)) continue;
      if (sq.y === 0 && sq.x !== 0) place(shop.shop, sq.x, qy);
      else if (sq.x === 0 && sq.y !== 0) place(shop.shop, qx, sq.y);
    }
  }
  for (const souk of data.souks ?? []) {
    const [qx, qy] = side.get(souk.quarter) ?? [1, 1];
    for (const shopId of souk.shops) {
      if (shops.has(shopId)) continue;
      const cells = souk.shops.filter((id) => shops.has(id)).map((id) => shops.get(id));
      const start = cells.length ? cells : [{ x: qx * 2, y: qy * 2 }];
      let best = null;
      for (const c of start) {
        for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
          const x = c.x + dx;
          const y = c.y + dy;
          if (Math.sign(x) !== qx || Math.sign(y) !== qy || taken.has(`${x},${y}`)) continue;
          const away = Math.min(Math.abs(x), Math.abs(y)) >= 2 ? 0 : 1; // not beside the path
          const spread = start.reduce((n, o) => n + Math.abs(o.x - x) + Math.abs(o.y - y), 0);
          const score = away * 1000 + spread;
          if (!best || score < best.score) best = { x, y, score };
        }
      }
      if (!best) best = { x: qx * (10 + shops.size), y: qy * 8 };
      place(shopId, best.x, best.y);
    }
  }
  const all = [...squares.values(), ...shops.values()];
  const found = {
    squares, shops, soukOf,
    quarterIndex: new Map((data.quarters ?? []).map((q, i) => [q.quarter, i])),
    minX: Math.min(...all.map((c) => c.x)), maxX: Math.max(...all.map((c) => c.x)),
    minY: Math.min(...all.map((c) => c.y)), maxY: Math.max(...all.map((c) => c.y)),
  };
  layouts.set(data, found);
  return found;
}

function good(x, y, seat, k = 1) {
  return s("circle", { cx: x, cy: y, r: 0.28 * k, fill: seatColour(null, seat), stroke: "#222", "stroke-width": 0.05, class: "deco" });
}

export function draw(ctx) {
  const { data, view, seats } = ctx;
  const game = view?.shared?.game ?? {};
  const L = layout(data);
  const preview = ctx.preview;
  const sends = new Set((preview?.effects?.sends ?? []).map((x) => x.shop));
  const left = L.minX - 0.7;
  const top = L.minY - 0.7;
  const cityW = L.maxX - L.minX + 1.4;
  const width = cityW;
  const city = s("g", { class: "city" });
  city.append(s("rect", { x: left, y: top, width, height: L.maxY - L.minY + 1.4, rx: 0.4, fill: "#f7efdc", class: "deco" }));
  for (const sq of L.squares.values()) {
    const here = game.steward === sq.square;
    const target = preview?.kind === "move" && preview.to === sq.square;
    city.append(s("rect", { x: sq.x - 0.47, y: sq.y - 0.47, width: 0.94, height: 0.94, rx: 0.12, fill: target ? "#ffe082" : sq.distance === 0 ? "#cdbb94" : "#e3d6b8", stroke: "#9c8a66", "stroke-width": 0.04, dataset: { place: `square:${sq.square}` }, title: `square ${sq.square}${sq.faces.length ? `: faces ${sq.faces.join(", ")}` : ""}` }));
    city.append(label(sq.x, sq.y + 0.3, sq.square, 0.26, { fill: "#6b5b3d" }));
    if (here) city.append(s("g", { class: "deco steward" }, s("circle", { cx: sq.x, cy: sq.y - 0.14, r: 0.16, fill: "#3b2a1a" }), s("path", { d: `M${sq.x - 0.24},${sq.y + 0.22} L${sq.x},${sq.y - 0.08} L${sq.x + 0.24},${sq.y + 0.22} Z`, fill: "#3b2a1a" })));
  }
  for (const souk of data.souks ?? []) {
    const qi = L.quarterIndex.get(souk.quarter) ?? 0;
    const holders = game.city?.[souk.souk] ?? [];
    const full = holders.length > 0 && holders.every((x) => x !== null && x !== undefined);
    souk.shops.forEach((shopId, i) => {
      const at = L.shops.get(shopId);
      if (!at) return;
      const hot = sends.has(shopId) || (preview?.shop === shopId);
      city.append(s("rect", { x: at.x - 0.46, y: at.y - 0.46, width: 0.92, height: 0.92, rx: 0.08, fill: hot ? "#ffe082" : QUARTER_FILL[qi % 4], stroke: full ? "#222" : QUARTER_EDGE[qi % 4], "stroke-width": full ? 0.09 : 0.05, dataset: { place: `shop:${shopId}` }, title: `${shopId}: souk ${souk.souk} (${souk.points} points)` }));
      const holder = holders[i];
      if (holder !== null && holder !== undefined) city.append(good(at.x, at.y - 0.05, holder));
      city.append(label(at.x, at.y + 0.33, shopId, 0.2, { fill: "#555" }));
    });
    const first = L.shops.get(souk.shops[0]);
    if (first) city.append(label(first.x, first.y - 0.34, `${souk.souk} · ${souk.points}`, 0.21, { fill: QUARTER_EDGE[qi % 4], "font-weight": 700 }));
  }
  for (const quarter of data.quarters ?? []) {
    const at = (quarter.souks ?? []).flatMap((id) => L.soukOf.get(id)?.shops ?? []).map((id) => L.shops.get(id)).filter(Boolean);
    if (!at.length) continue;
    const far = at.reduce((a, b) => (Math.abs(b.x) + Math.abs(b.y) > Math.abs(a.x) + Math.abs(a.y) ? b : a));
    const qi = L.quarterIndex.get(quarter.quarter) ?? 0;
    city.append(label(far.x, far.y + 0.75 * Math.sign(far.y || 1), quarter.quarter, 0.4, { fill: QUARTER_EDGE[qi % 4], "font-weight": 800 }));
  }

  // Beside the city: the tower, the caravan, the buildings, the players.
  let y = L.maxY + 1.2;
  const side = s("g", { class: "supply" });
  side.append(label(left + 0.1, y, `Week ${game.week ?? "?"}, day ${game.day ?? "?"} · ${game.deck ?? 0} cards in the deck · ${game.yellow ?? 0} yellow dice bought`, 0.45, { "text-anchor": "start", "font-weight": 700 }));
  y += 0.6;
  const floors = game.tower ?? [];
  const floorW = width / Math.max(floors.length, 1);
  const actionOf = new Map((data.tower?.floors ?? []).map((f) => [f.floor, f.action]));
  floors.forEach((floor, i) => {
    const x = left + i * floorW;
    side.append(s("rect", { x: x + 0.05, y, width: floorW - 0.1, height: 2.1, rx: 0.2, fill: floor.value ? "#fff7df" : "#f0ebe0", stroke: "#b9a277", "stroke-width": 0.05, dataset: { place: `floor:${floor.floor}` }, title: `${floor.floor}: ${actionOf.get(floor.floor) ?? ""}` }));
    side.append(label(x + floorW / 2, y + 0.35, `${i + 1}. ${floor.floor}`, 0.34, { "font-weight": 700 }));
    side.append(dice(x + floorW / 2, y + 1.2, floor));
  });
  y += 2.5;

  const cap = game.caravan?.capacity ?? 0;
  const rows = data.caravan?.rows ?? [];
  const perRow = rows.length ? Math.ceil(cap / rows.length) : 0;
  side.append(label(left + 0.1, y, `Caravan (${(game.caravan?.goods ?? []).length} of ${cap})`, 0.42, { "text-anchor": "start", "font-weight": 700 }));
  const carY = y + 0.4;
  rows.forEach((row, ri) => {
    const ry = carY + (rows.length - 1 - ri) * 0.9;
    side.append(label(left + 0.9, ry + 0.4, `×${row.multiplier}`, 0.3));
    for (let p = 0; p < perRow; p += 1) {
      const x = left + 1.6 + p * 0.9;
      side.append(s("rect", { x, y: ry, width: 0.8, height: 0.8, rx: 0.1, fill: "#efe3c4", stroke: "#a8925f", "stroke-width": 0.04, class: "deco" }));
      const seat = game.caravan?.goods?.[ri * perRow + p];
      if (seat !== undefined && seat !== null) side.append(good(x + 0.4, ry + 0.4, seat));
    }
  });
  const bx = left + 2 + perRow * 0.9;
  const built = new Map();
  for (const [seat, p] of (game.players ?? []).entries()) for (const b of p.buildings ?? []) built.set(b, [...(built.get(b) ?? []), seat]);
  const bW = (left + width - bx) / 3;
  (data.buildings ?? []).forEach((b, i) => {
    const x = bx + (i % 3) * bW;
    const by = y + 0.2 + Math.floor(i / 3) * 1.45;
    side.append(s("rect", { x: x + 0.05, y: by, width: bW - 0.1, height: 1.35, rx: 0.15, fill: "#fbf4e4", stroke: "#a8925f", "stroke-width": 0.04, dataset: { place: `building:${b.building}` }, title: `${b.name}: ${b.power}` }));
    side.append(label(x + bW / 2, by + 0.3, b.name, 0.3, { "font-weight": 700 }));
    side.append(label(x + bW / 2, by + 0.68, `${b.camels} camels · ${b.gold} gold`, 0.24));
    (built.get(b.building) ?? []).forEach((seat, n) => side.append(good(x + 0.35 + n * 0.45, by + 1.05, seat, 0.6)));
  });
  y += Math.max(rows.length * 0.9 + 0.6, 3.2);
  if (ctx.compact) return s("svg", { class: "board-yspahan", viewBox: `${left} ${top} ${width} ${y - top + 0.2}`, role: "img", "aria-label": "Yspahan board" }, city, side);

  const cardName = new Map((data.cards ?? []).map((c) => [c.card, c]));
  for (const [seat, p] of (game.players ?? []).entries()) {
    side.append(playerRow(ctx, seat, p, left, y, width, cardName));
    y += 1.5;
  }
  const hand = view?.own?.private?.hand ?? [];
  if (Array.isArray(hand) && view?.own?.seat !== null && view?.own?.seat !== undefined) {
    side.append(label(left + 0.1, y + 0.1, "Your cards", 0.42, { "text-anchor": "start", "font-weight": 700 }));
    y += 0.4;
    const cw = Math.min(4, width / Math.max(hand.length, 1));
    hand.forEach((card, i) => {
      const info = cardName.get(card);
      side.append(s("rect", { x: left + i * cw + 0.05, y, width: cw - 0.1, height: 1.4, rx: 0.15, fill: "#fff", stroke: "#7a6a45", "stroke-width": 0.05, dataset: { place: `card:${card}` }, title: info ? `${info.name}: ${info.text}` : card }));
      side.append(label(left + i * cw + cw / 2, y + 0.45, info?.name ?? card, 0.3, { "font-weight": 700 }));
      side.append(label(left + i * cw + cw / 2, y + 0.95, (info?.text ?? "").slice(0, 34), 0.2));
    });
    if (!hand.length) side.append(label(left + 2, y + 0.4, "none", 0.3));
    y += 1.7;
  }
  return s("svg", { class: "board-yspahan", viewBox: `${left} ${top} ${width} ${y - top + 0.2}`, role: "img", "aria-label": "Yspahan board" }, city, side);
}

function dice(x, y, floor) {
  const n = (floor.white ?? 0) + (floor.yellow ?? 0);
  if (!n) return label(x, y, "—", 0.4, { fill: "#aaa" });
  const out = [];
  const size = 0.5;
  const perRow = 5;
  for (let i = 0; i < n; i += 1) {
    const cx = x + ((i % perRow) - (Math.min(n, perRow) - 1) / 2) * (size + 0.08);
    const cy = y - 0.25 + Math.floor(i / perRow) * (size + 0.08);
    const yellow = i >= (floor.white ?? 0);
    out.push(s("rect", { x: cx - size / 2, y: cy - size / 2, width: size, height: size, rx: 0.08, fill: yellow ? "#f7d13d" : "#fff", stroke: "#333", "stroke-width": 0.03, class: "deco" }),
      label(cx, cy, String(floor.value), 0.32, { fill: "#222" }));
  }
  return s("g", { class: "deco" }, out);
}

function playerRow(ctx, seat, p, left, y, width, cardName) {
  const { seats, view } = ctx;
  const name = seats?.find((x) => x.seat === seat)?.name || `P${seat + 1}`;
  const turn = view?.shared?.game?.actor === seat && !view?.shared?.result;
  const parts = [`${p.gold} gold`, `${p.camels} camels`, `${p.cards} cards`];
  if (p.no_camels) parts.push(`${p.no_camels}× build without camels`);
  if (p.no_gold) parts.push(`${p.no_gold}× build without gold`);
  const buildings = (p.buildings ?? []).length ? `built: ${p.buildings.join(", ")}` : "no buildings";
  const hand = Array.isArray(p.hand) ? ` · hand: ${p.hand.map((c) => cardName.get(c)?.name ?? c).join(", ") || "none"}` : "";
  return s("g", { class: "player", dataset: { seat } },
    s("rect", { x: left, y, width, height: 1.3, rx: 0.2, fill: turn ? "#fdf3d8" : "#fffdf8", stroke: seatColour(null, seat), "stroke-width": 0.08 }),
    good(left + 0.45, y + 0.65, seat, 1.1),
    s("text", { x: left + 0.95, y: y + 0.42, "font-size": 0.36, "dominant-baseline": "central", class: "lbl", "font-weight": 700 }, `P${seat + 1} · ${name}${view?.own?.seat === seat ? " (you)" : ""} · ${p.score} points`),
    s("text", { x: left + 0.95, y: y + 0.92, "font-size": 0.28, "dominant-baseline": "central", class: "lbl" }, `${parts.join(" · ")} · ${buildings}${hand}`));
}

export function places(choice) {
  switch (choice.kind) {
    case "place":
    case "send":
    case "keep":
      return choice.shop ? [`shop:${choice.shop}`] : [];
    case "move":
      return choice.to ? [`square:${choice.to}`] : [];
    case "take":
      return choice.floor ? [`floor:${choice.floor}`] : [];
    case "build":
      return choice.building ? [`building:${choice.building}`] : [];
    case "play":
    case "extra":
      return choice.card ? [`card:${choice.card}`] : [];
    default:
      return [];
  }
}

export function confirm() {
  return false;
}

export function turnOf(view) {
  const game = view?.shared?.game;
  if (!game?.week) return "setup";
  return `week ${game.week} day ${game.day}`;
}

/** A seat's points so far (the view's running score). */
export function scoreOf(view, seat) {
  return view?.shared?.game?.players?.[seat]?.score ?? null;
}

export const yspahanBoard = { draw, places, confirm, turnOf, seatColour, scoreOf };
