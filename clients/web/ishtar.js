// Ishtar's board in SVG: the hex terrain (sand, rocks with their gems, tablets, fountains), the
// tiles and blooming tokens laid with their flowers and icons, assistants and trees, the
// flowerbeds' controllers and each fountain's leaders; below it the six piles and the watering
// can, the tree row, the skills, the stock and one board per player. Positions come from the
// view (axial spaces, protocol/games/ishtar.md "Geometry") and the data (shapes, skills, colours).

import { s, label, paint, SEAT_COLOURS } from "./boards.js";

const SQ3 = Math.sqrt(3);
const GROUND = { ".": "#ead7a4", p: "#b8a88c", r: "#b8a88c", w: "#b8a88c", T: "#7d6a4f", F: "#7fb7d6" };
const GRASS = "#8cc265";
const TOKEN = "#b5dc82";
const FLOWER = "#fff4fb";

export function centre(q, r) {
  return [SQ3 * (q + r / 2), 1.5 * r];
}

function hexPoints(x, y, k = 1) {
  const out = [];
  for (let i = 0; i < 6; i += 1) {
    const a = (Math.PI / 180) * (60 * i - 90);
    out.push(`${round(x + k * Math.cos(a))},${round(y + k * Math.sin(a))}`);
  }
  return out.join(" ");
}

function round(x) {
  return Math.round(x * 1000) / 1000;
}

const key = (q, r) => `${q},${r}`;

export function seatColour(data, seat) {
  return paint(data?.player_colours?.[seat] ?? SEAT_COLOURS[seat % SEAT_COLOURS.length]);
}

function flowers(x, y, n, k = 1) {
  const dots = [];
  const spots = n === 1 ? [[0, 0]] : n === 2 ? [[-0.28, 0], [0.28, 0]] : [[-0.3, 0.15], [0.3, 0.15], [0, -0.3]];
  for (const [dx, dy] of spots.slice(0, n)) dots.push(s("circle", { cx: x + dx * k, cy: y + dy * k, r: 0.17 * k, fill: FLOWER, stroke: "#d0559b", "stroke-width": 0.06 * k, class: "deco" }));
  return dots;
}

function iconMark(x, y, icon, k = 1) {
  if (!icon) return null;
  return s("g", { class: "deco" },
    s("circle", { cx: x, cy: y + 0.42 * k, r: 0.26 * k, fill: "#fff", stroke: "#333", "stroke-width": 0.05 * k }),
    label(x, y + 0.43 * k, icon[0].toUpperCase(), 0.34 * k, { fill: "#333", "font-weight": 700 }));
}

/** A tile map ({shape, spaces}) drawn small at (x, y), its space 0 there, unturned. */
function miniTile(data, tile, x, y, k) {
  const offsets = data.tile_shapes?.[tile.shape]?.rotations?.[0] ?? [];
  return s("g", { class: "deco" }, offsets.map(([dq, dr], i) => {
    const [cx, cy] = centre(dq, dr);
    const space = tile.spaces?.[i] ?? {};
    return [
      s("polygon", { points: hexPoints(x + cx * k, y + cy * k, k * 0.97), fill: tile.starting ? "#a7d3e0" : GRASS, stroke: "#4d7a35", "stroke-width": 0.05 }),
      flowers(x + cx * k, y + cy * k, space.flowers ?? 0, k),
      iconMark(x + cx * k, y + cy * k, space.icon, k),
    ];
  }));
}

export function draw(ctx) {
  const { data, view, seats } = ctx;
  const game = view?.shared?.game ?? {};
  const colour = (seat) => seatColour(data, seat);
  const spaces = [];
  for (const row of game.terrain ?? []) {
    [...row.cells].forEach((code, i) => {
      if (code !== " ") spaces.push({ q: row.q + i, r: row.r, code, name: row.names?.[i] ?? null });
    });
  }
  if (!spaces.length) return s("svg", { class: "board-ishtar", viewBox: "0 0 10 2" }, label(5, 1, "No terrain yet", 0.8));
  const xs = spaces.map(({ q, r }) => centre(q, r)[0]);
  const ys = spaces.map(({ q, r }) => centre(q, r)[1]);
  const minX = Math.min(...xs) - 1.2;
  const maxX = Math.max(...xs) + 1.2;
  const minY = Math.min(...ys) - 1.3;
  const width = Math.max(maxX - minX, 30);
  const left = minX - (width - (maxX - minX)) / 2;
  const mapBottom = Math.max(...ys) + 1.3;

  const fountainAt = new Map((game.fountains ?? []).map((f) => [key(...f.at), f]));
  const ground = s("g", { class: "terrain" });
  for (const { q, r, code, name } of spaces) {
    const [x, y] = centre(q, r);
    const fountain = code === "F" ? fountainAt.get(key(q, r)) : null;
    ground.append(s("polygon", {
      points: hexPoints(x, y, 0.98), fill: fountain ? paint(fountain.colour) : GROUND[code] ?? GROUND["."],
      stroke: "#c7b07a", "stroke-width": 0.05, dataset: { place: `hex:${key(q, r)}` },
      title: `${name ?? `(${q},${r})`}${code === "T" ? " sacred tablet" : code === "F" ? " fountain" : ""}`,
    }));
    // The space's name as texts write it (f7: the view's terrain names it), under what is laid.
    if (name && code !== "F") ground.append(label(x, y + 0.62, name, 0.3, { fill: code === "T" ? "#efe4cc" : "#8a7650" }));
    if (code === "T") ground.append(s("rect", { x: x - 0.35, y: y - 0.45, width: 0.7, height: 0.9, rx: 0.12, fill: "#d8c9a6", stroke: "#4a3d2a", "stroke-width": 0.06, class: "deco" }));
  }

  const laid = s("g", { class: "laid" });
  const assistants = [];
  const trees = [];
  for (const item of game.laid ?? []) {
    if (item.tile !== undefined || item.token !== undefined) {
      const fillColour = item.token !== undefined ? TOKEN : GRASS;
      for (const [q, r, n, icon] of item.spaces ?? []) {
        const [x, y] = centre(q, r);
        laid.append(s("polygon", { points: hexPoints(x, y, 0.98), fill: fillColour, stroke: "#4d7a35", "stroke-width": 0.07, class: "deco" }), flowers(x, y, n), iconMark(x, y, icon));
      }
    } else if (item.tree !== undefined) trees.push(item);
    else if (item.assistant !== undefined) assistants.push(item);
  }

  const beds = s("g", { class: "beds" });
  for (const bed of game.beds ?? []) {
    if (bed.owner === null || bed.owner === undefined) continue;
    for (const [q, r] of bed.cells) {
      const [x, y] = centre(q, r);
      beds.append(s("polygon", { points: hexPoints(x, y, 0.8), fill: "none", stroke: colour(bed.owner), "stroke-width": 0.14, class: "deco" }));
    }
  }
  const rocks = s("g", { class: "gems" });
  for (const [at, gem] of Object.entries(game.rock_gems ?? {})) {
    const [q, r] = at.split(",").map(Number);
    const [x, y] = centre(q, r);
    rocks.append(s("polygon", { points: `${x},${y - 0.38} ${x + 0.32},${y} ${x},${y + 0.38} ${x - 0.32},${y}`, fill: paint(gem), stroke: "#222", "stroke-width": 0.05, class: "deco" }));
  }
  const pieces = s("g", { class: "pieces" });
  for (const f of game.fountains ?? []) {
    const [x, y] = centre(...f.at);
    pieces.append(label(x, y - 0.15, String(f.points), 0.62, { fill: "#fff", "font-weight": 800, stroke: "#0006", "stroke-width": 0.03 }));
    (f.leaders ?? []).forEach((seat, i, all) => pieces.append(s("circle", { cx: x + (i - (all.length - 1) / 2) * 0.36, cy: y + 0.45, r: 0.16, fill: colour(seat), stroke: "#fff", "stroke-width": 0.05, class: "deco" })));
  }
  for (const t of trees) {
    const [x, y] = centre(...t.at);
    pieces.append(s("g", { class: "deco tree", dataset: { seat: t.tree } },
      s("rect", { x: x - 0.08, y: y, width: 0.16, height: 0.42, fill: "#6b4a2b" }),
      s("circle", { cx: x, cy: y - 0.12, r: 0.42, fill: "#2f7d32", stroke: colour(t.tree), "stroke-width": 0.14 })));
  }
  for (const a of assistants) {
    const [x, y] = centre(...a.at);
    pieces.append(s("g", { class: "deco assistant", dataset: { seat: a.assistant } },
      s("circle", { cx: x, cy: y - 0.28, r: 0.2, fill: colour(a.assistant), stroke: "#222", "stroke-width": 0.05 }),
      s("path", { d: `M${x - 0.32},${y + 0.35} Q${x},${y - 0.25} ${x + 0.32},${y + 0.35} Z`, fill: colour(a.assistant), stroke: "#222", "stroke-width": 0.05 })));
  }

  const preview = previewCells(ctx, game);
  const ghost = s("g", { class: preview.length ? "preview" : "" }, preview.map(({ q, r, n, icon }) => {
    const [x, y] = centre(q, r);
    return [s("polygon", { points: hexPoints(x, y, 0.96), fill: "#fff59d", "fill-opacity": 0.85, stroke: "#e65100", "stroke-width": 0.14, class: "deco" }), flowers(x, y, n), iconMark(x, y, icon)];
  }));

  // The supply below the map.
  let y = mapBottom + 0.6;
  const supply = s("g", { class: "supply" });
  const pileW = width / 6;
  supply.append(label(left + 0.2, y, "Piles", 0.7, { "text-anchor": "start", "font-weight": 700 }));
  y += 0.7;
  (game.piles ?? []).forEach((pile, i) => {
    const x = left + i * pileW;
    const can = game.can === i;
    supply.append(s("rect", { x: x + 0.1, y, width: pileW - 0.2, height: 4.2, rx: 0.3, fill: can ? "#d7ecf6" : "#fffdf8", stroke: can ? "#1d6f9a" : "#d8cdb4", "stroke-width": can ? 0.14 : 0.06, dataset: { place: `pile:${i}` }, title: `pile ${i + 1}: ${pile.count} tiles (${pile.cup})` }));
    supply.append(label(x + pileW / 2, y + 0.5, `${i + 1} · ${pile.count} ${pile.cup}`, 0.48));
    if (pile.top) supply.append(miniTile(data, pile.top, x + pileW / 2 - 0.9, y + 2.1, 0.55));
    else if (pile.count) supply.append(s("polygon", { points: hexPoints(x + pileW / 2, y + 2.2, 0.9), fill: "#bfa77a", class: "deco" }), label(x + pileW / 2, y + 2.2, "?", 0.7));
    if (can) supply.append(label(x + pileW / 2, y + 3.75, "watering can", 0.45, { fill: "#1d6f9a", "font-weight": 700 }));
  });
  y += 4.8;
  if (ctx.compact) return finish();

  const cardW = width / 6;
  supply.append(label(left + 0.2, y, `Tree row · ${game.deck ?? 0} cards in the deck · ${game.markers ?? 0} markers`, 0.6, { "text-anchor": "start", "font-weight": 700 }));
  y += 0.7;
  (game.display ?? []).forEach((card, i) => supply.append(treeCard(card, left + i * cardW + 0.1, y, cardW - 0.2)));
  y += 3.4;

  supply.append(label(left + 0.2, y, "Skills", 0.7, { "text-anchor": "start", "font-weight": 700 }));
  y += 0.7;
  const skillW = width / 5;
  const owners = new Map();
  for (const p of game.players ?? []) for (const letter of Object.keys(p.skills ?? {})) owners.set(letter, [...(owners.get(letter) ?? []), p.seat]);
  for (const skill of data.skills ?? []) {
    const row = skill.level === "upper" ? 0 : 1;
    const x = left + (skill.column - 1) * skillW;
    const sy = y + row * 2.4;
    supply.append(s("rect", { x: x + 0.1, y: sy, width: skillW - 0.2, height: 2.2, rx: 0.25, fill: row ? "#f3ead6" : "#ece2f5", stroke: "#b9a98b", "stroke-width": 0.05, dataset: { place: `skill:${skill.skill}` }, title: `${skill.name}: ${skill.text}` }));
    supply.append(label(x + 0.55, sy + 0.5, skill.skill, 0.7, { "font-weight": 800 }));
    supply.append(wrapText(skill.summary ?? "", x + 1.0, sy + 0.45, skillW - 1.3, 0.4, 3));
    (owners.get(skill.skill) ?? []).forEach((seat, n) => supply.append(s("circle", { cx: x + 0.5 + n * 0.45, cy: sy + 1.75, r: 0.18, fill: colour(seat), stroke: "#222", "stroke-width": 0.04, class: "deco" })));
  }
  y += 5.0;

  supply.append(label(left + 0.2, y, "Stock", 0.6, { "text-anchor": "start", "font-weight": 700 }));
  (data.gem_colours ?? []).forEach((gem, i) => {
    const x = left + 3 + i * 3.2;
    supply.append(s("rect", { x: x - 0.5, y: y - 0.55, width: 3, height: 1.1, rx: 0.3, fill: "#fffdf8", stroke: "#d8cdb4", "stroke-width": 0.05, dataset: { place: `stock:${gem}` }, title: `${gem} gems in the stock` }));
    supply.append(gemIcon(x, y, gem), label(x + 1.3, y, String(game.stock?.[gem] ?? 0), 0.55));
  });
  supply.append(label(left + 13.5, y, `${(game.tokens ?? []).length} blooming tokens left${game.triggered ? " · last round" : ""}`, 0.5, { "text-anchor": "start" }));
  y += 1.2;

  for (const player of game.players ?? []) {
    supply.append(playerBoard(ctx, player, left, y, width, colour));
    y += 3.3;
  }

  return finish();

  function finish() {
    const height = y - minY + 0.4;
    return s("svg", { class: "board-ishtar", viewBox: `${round(left)} ${round(minY)} ${round(width)} ${round(height)}`, role: "img", "aria-label": "Ishtar board" },
    s("rect", { x: left, y: minY, width, height: mapBottom - minY, rx: 0.6, fill: "#f4ead0", class: "deco" }),
    ground, laid, beds, rocks, pieces, ghost, supply);
  }
}

function previewCells(ctx, game) {
  const choice = ctx.preview;
  if (!choice) return [];
  if (choice.kind === "rotation" && Array.isArray(choice.cells)) {
    const tile = game.pending?.tile;
    return choice.cells.map(([q, r], i) => ({ q, r, n: tile?.spaces?.[i]?.flowers ?? 0, icon: tile?.spaces?.[i]?.icon }));
  }
  if (choice.kind === "bloom" && Array.isArray(choice.cells)) {
    const token = (game.tokens ?? []).find((t) => t.token === choice.token);
    return choice.cells.map(([q, r], i) => ({ q, r, n: token?.flowers?.[i] ?? 0 }));
  }
  if (Array.isArray(choice.at) && ["position", "assistant", "tree"].includes(choice.kind)) {
    return [{ q: choice.at[0], r: choice.at[1], n: 0 }];
  }
  return [];
}

function gemIcon(x, y, gem, k = 1) {
  return s("polygon", { points: `${x},${y - 0.4 * k} ${x + 0.34 * k},${y} ${x},${y + 0.4 * k} ${x - 0.34 * k},${y}`, fill: paint(gem), stroke: "#222", "stroke-width": 0.05, class: "deco" });
}

function treeCard(card, x, y, w, place = true, small = false) {
  if (small) {
    return s("g", {},
      s("rect", { x, y, width: w, height: 1.7, rx: 0.2, fill: card.marker ? "#e4f2dc" : "#f1efe9", stroke: "#3f7d32", "stroke-width": 0.05, dataset: place ? { place: `card:${card.card}` } : undefined, title: `reserved: ${card.name}, ${card.points} points` }),
      label(x + w / 2, y + 0.45, `${card.name}`, 0.42, { "font-weight": 700 }),
      label(x + w / 2, y + 1.15, `${card.points} pts (reserved)`, 0.38));
  }
  return s("g", {},
    s("rect", { x, y, width: w, height: 3, rx: 0.3, fill: card.marker ? "#e4f2dc" : "#f1efe9", stroke: card.marker ? "#3f7d32" : "#b9b29f", "stroke-width": 0.07, dataset: place ? { place: `card:${card.card}` } : undefined, title: `${card.name}: ${card.points} points${card.marker ? "" : " (no marker: cannot be bought)"}` }),
    label(x + w / 2, y + 0.5, card.name, 0.5, { "font-weight": 700 }),
    label(x + w / 2, y + 1.3, `${card.points} pts`, 0.6),
    Object.entries(card.cost ?? {}).filter(([, n]) => n > 0).flatMap(([gem, n], gi) => Array.from({ length: n }, (_, j) => gemIcon(x + 0.6 + (gi * 2 + j) * 0.65, y + 2.25, gem, 0.7))),
    card.marker ? s("circle", { cx: x + w - 0.45, cy: y + 2.3, r: 0.22, fill: "#3f7d32", class: "deco" }) : null);
}

function wrapText(text, x, y, w, size, lines) {
  const perLine = Math.max(8, Math.floor(w / (size * 0.52)));
  const words = text.split(" ");
  const out = [];
  let line = "";
  for (const word of words) {
    if ((line + " " + word).trim().length > perLine) {
      out.push(line);
      line = word;
    } else line = (line + " " + word).trim();
  }
  if (line) out.push(line);
  const shown = out.slice(0, lines);
  if (out.length > lines) shown[lines - 1] = `${shown[lines - 1].slice(0, perLine - 1)}…`;
  return s("text", { x, y, "font-size": size, class: "lbl small" }, shown.map((l, i) => s("tspan", { x, dy: i ? size * 1.2 : 0 }, l)));
}

function playerBoard(ctx, player, left, y, width, colour) {
  const { seats, view, data } = ctx;
  const seat = player.seat;
  const mine = view?.own?.seat === seat;
  const name = seats?.find((x) => x.seat === seat)?.name || `P${seat + 1}`;
  const provisional = view?.shared?.game?.provisional?.[seat]?.total;
  const final = view?.shared?.game?.scores?.[seat]?.total;
  const turn = view?.shared?.turn?.seat === seat;
  const g = s("g", { class: "player", dataset: { seat } },
    s("rect", { x: left, y, width, height: 3, rx: 0.35, fill: turn ? "#fdf3d8" : "#fffdf8", stroke: colour(seat), "stroke-width": 0.14 }),
    s("circle", { cx: left + 0.7, cy: y + 0.75, r: 0.35, fill: colour(seat), class: "deco" }),
    s("text", { x: left + 1.3, y: y + 0.75, "font-size": 0.62, "dominant-baseline": "central", class: "lbl", "font-weight": 700 }, `P${seat + 1} · ${name}${mine ? " (you)" : ""}`),
    label(left + width - 0.4, y + 0.75, final !== undefined && final !== null ? `${final} points` : `${provisional ?? 0} points so far${mine && view?.own?.private?.planted_points ? ` + ${view.own.private.planted_points} in trees` : ""}`, 0.55, { "text-anchor": "end" }));
  (data.gem_colours ?? []).forEach((gem, i) => {
    const x = left + 1 + i * 2.6;
    g.append(s("rect", { x: x - 0.5, y: y + 1.45, width: 2.3, height: 1.1, rx: 0.3, fill: "#fff", stroke: "#ddd", "stroke-width": 0.04, dataset: mine ? { place: `mygem:${gem}` } : undefined, title: `${gem} gems` }));
    g.append(gemIcon(x, y + 2, gem, 0.9), label(x + 1, y + 2, String(player.gems?.[gem] ?? 0), 0.55));
  });
  let x = left + 9;
  g.append(s("text", { x, y: y + 1.75, "font-size": 0.45, "dominant-baseline": "central", class: "lbl" },
    `assistants: ${player.assistants} in supply, ${player.blocked} on the carpet, ${player.placed} placed`));
  const skills = Object.keys(player.skills ?? {});
  g.append(s("text", { x, y: y + 2.4, "font-size": 0.45, "dominant-baseline": "central", class: "lbl" }, `trees planted: ${player.planted} · skills: ${skills.length ? skills.join(" ") : "none"}`));
  x = left + width - 6.5;
  if (player.reserved_tree) g.append(treeCard(player.reserved_tree, x, y + 1.15, 3, mine, true));
  if (player.reserved_tile) {
    g.append(s("rect", { x: x + 3.2, y: y + 1.2, width: 3, height: 1.7, rx: 0.2, fill: "#fff", stroke: "#999", "stroke-width": 0.04, dataset: mine ? { place: "reserved" } : undefined, title: "reserved tile" }));
    g.append(miniTile(data, player.reserved_tile, x + 3.9, y + 1.8, 0.35));
  }
  return g;
}

export function places(choice) {
  switch (choice.kind) {
    case "pile":
    case "reserve_tile":
      return [`pile:${choice.pile}`];
    case "reserved":
      return ["reserved"];
    case "gem":
      return [`mygem:${choice.colour}`];
    case "take_gem":
      return [`stock:${choice.colour}`];
    case "position":
    case "assistant":
    case "tree":
      return Array.isArray(choice.at) ? [`hex:${key(...choice.at)}`] : [];
    case "rotation":
    case "bloom":
      return (choice.cells ?? []).map(([q, r]) => `hex:${key(q, r)}`);
    case "skill":
      return [`skill:${choice.skill}`];
    case "reserve_tree":
    case "buy":
      return [`card:${choice.card}`];
    default:
      return [];
  }
}

export function confirm(choice) {
  return choice.kind === "rotation" || choice.kind === "bloom";
}

export function turnOf(view) {
  const game = view?.shared?.game;
  return game?.turn ? `turn ${game.turn}` : "setup";
}

/** A seat's points as the view tells everyone: the final total, else the provisional one
 * (without face-down trees). */
export function scoreOf(view, seat) {
  const game = view?.shared?.game;
  return game?.scores?.[seat]?.total ?? game?.provisional?.[seat]?.total ?? null;
}

export const ishtarBoard = { draw, places, confirm, turnOf, seatColour, scoreOf };
