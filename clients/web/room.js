// A room: play (a seat), watch (a spectator; ?overlay=1 for a stream), replay (a finished match
// played again by the server). Drawn from the room's view and info alone: the seats and their
// clocks, whose turn it is and what they are asked, the legal choices to click, the event log,
// chat, the board of the game (boards.js, from GET /games/<name> and the view) with the choices
// that have a place on it, the view as readable lists, the result at the end, with "Play again"
// for a seat (a rematch, SPEC 9). A replay keeps every revision it receives, to step back and
// forth and jump to a turn. When a rematch moves this page's seat or spectator into a new room
// (whoever asked), the page follows: the new room's address, the room the session already
// holds (its seat token is stored as any other). Who was not moved reads the new room in the
// finished room's `info.rematch` ("The players went on to a new match"): a player who came back
// joins it with a click (its seat is free there), never by itself; a spectator (a room with a
// spectator delay keeps them until their feed has shown the end) follows by itself once the
// final scores have been on screen for `?follow=S` seconds (FOLLOW_PAUSE_S), or at a click.

import { h, fill, explain, words, choiceText, eventText, promptText, clockText, tree, seatName } from "./ui.js";
import { ServerError } from "./oasis.js";
import { boardPanel, gameData } from "./boards.js";
import { ishtarBoard } from "./ishtar.js";
import { yspahanBoard } from "./yspahan.js";

const BOARDS = { ishtar: ishtarBoard, yspahan: yspahanBoard };

const LOW_CLOCK_MS = 30000;
/** Seconds a spectator's final scores stay on screen before it follows the players' rematch. */
const FOLLOW_PAUSE_S = 10;

export function roomView(ctx, mode, roomId) {
  const { session, notify, go, link, overlay } = ctx;
  let room = null;
  let acting = false;
  let rematching = false;
  // A rematch the finished room names (not moved into it): when the end was first shown, when a
  // spectator follows (ms since the epoch; null: not yet known), whether it chose to stay.
  let endedAt = null;
  let followAt = null;
  let followTimer = null;
  let staying = false;
  let disposed = false;
  let watching = mode !== "play";
  const timers = [];

  const title = h("h1", {}, words(mode), " ", h("span", { class: "mono" }, roomId));
  const badges = h("div", { class: "badges" });
  const mismatches = h("span", { id: "mismatches", class: "mono", title: "views whose hash was not the server's" }, "0");
  const integrity = h("span", { class: "integrity" }, "hash mismatches: ", mismatches);
  const turnBox = h("section", { class: "card turn", id: "turn" }, h("p", { class: "hint" }, "Joining…"));
  const seatsBox = h("section", { class: "card seats", id: "seats" });
  const logList = h("ol", { class: "log", id: "log" });
  const logBox = h("section", { class: "card logbox" }, h("h2", {}, "What happened"), logList);
  const chatList = h("ol", { class: "chat", id: "chat" });
  const chatInput = h("input", { id: "chat-text", maxlength: 500, placeholder: "say something", autocomplete: "off" });
  const chatForm = h("form", { class: "say", id: "chat-form" }, chatInput, h("button", { type: "submit" }, "Say"));
  const chatBox = h("section", { class: "card chatbox" }, h("h2", {}, "Chat"), chatList, chatForm);
  const stateBox = h("section", { class: "card state", id: "state" });
  const lastEvent = h("p", { class: "last-event", id: "last-event" });
  const boardBox = h("section", { class: "card boardbox", id: "board-box", hidden: true });
  const replayBox = h("section", { class: "card replaybox", id: "replay", hidden: true });
  let board = null; // {game, data, panel}
  // A replay's revisions as they came ({rev, view}) and its events; `position` is the index of
  // the one shown, or null to follow the latest.
  const history = [];
  const replayLog = [];
  let position = null;
  let playing = null;

  const element = overlay
    ? h("div", { class: "overlay-root", id: "overlay" }, h("div", { class: "overlay-seats", id: "seats" }), boardBox, lastEvent, h("div", { class: "overlay-foot" }, integrity))
    : h("div", { class: `room ${mode}` },
        h("div", { class: "room-head" }, title, badges, integrity),
        h("div", { class: "grid" },
          h("div", { class: "col" }, turnBox, seatsBox),
          h("div", { class: "col wide" }, replayBox, boardBox, stateBox),
          h("div", { class: "col" }, logBox, chatBox)));
  const overlaySeats = overlay ? element.querySelector(".overlay-seats") : null;

  chatForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = chatInput.value.trim();
    if (!text || !room) return;
    room.say(text).then(() => {
      chatInput.value = "";
    }, (err) => notify(explain(err), "error"));
  });

  // Joining -----------------------------------------------------------------------------------
  async function enter() {
    // A room the session is in already (where a rematch moved it): no need to join it again.
    const held = session.rooms.get(roomId);
    try {
      if (held && (mode === "play" || (mode === "watch" && held.spectator))) {
        room = held;
        watching = held.spectator;
      } else if (mode === "play") {
        try {
          room = await session.join(roomId, { name: ctx.playerName() || "player" });
        } catch (err) {
          if (!(err instanceof ServerError) || !["not_allowed", "room_full"].includes(err.code)) throw err;
          notify(`${explain(err)} You are watching instead.`);
          watching = true;
          room = await session.spectate(roomId);
        }
      } else if (mode === "watch") {
        room = await session.spectate(roomId);
      } else {
        room = await session.replay(roomId, interval());
      }
    } catch (err) {
      if (disposed) return;
      fill(turnBox, h("p", { class: "error" }, explain(err)), h("a", { class: "button", href: "/", onclick: link("/") }, "Back to the lobby"));
      fill(badges);
      return;
    }
    if (disposed) return;
    if (mode === "replay") {
      record();
      room.addEventListener("change", record);
      room.addEventListener("events", recordEvents);
      if (interval() === 0) position = 0;
    }
    for (const kind of ["change", "events", "chat", "pause"]) room.addEventListener(kind, schedule);
    room.addEventListener("moved", follow);
    loadBoard(room.info.game);
    render();
    timers.push(setInterval(tickClocks, 250), setInterval(tickFollow, 250));
  }

  function interval() {
    const asked = Number(ctx.params.get("interval") ?? "0");
    return Number.isFinite(asked) && asked >= 0 ? asked : 0;
  }

  async function loadBoard(game) {
    const kind = BOARDS[game];
    if (!kind || board) return;
    try {
      const data = await gameData(game);
      if (disposed) return;
      board = { game, data, panel: boardPanel(kind, (i) => act(i), { compact: overlay }), kind };
      fill(boardBox, board.panel.element);
      boardBox.hidden = false;
      schedule();
    } catch (err) {
      fill(boardBox, h("p", { class: "error" }, `The board cannot be drawn: ${explain(err)}`));
      boardBox.hidden = false;
    }
  }

  // Replays: every revision kept ---------------------------------------------------------------
  function record() {
    if (!room?.view || history.at(-1)?.rev === room.rev) return;
    history.push({ rev: room.rev, view: room.view });
  }

  function recordEvents(e) {
    for (const event of e.detail.events) replayLog.push({ rev: e.detail.rev, event });
  }

  /** What is shown: the latest view, or in a replay the revision stepped to. */
  function shown() {
    if (mode !== "replay" || position === null || !history[position]) {
      return { view: room.view, rev: room.rev, log: mode === "replay" ? replayLog : room.log, latest: true };
    }
    const { view, rev } = history[position];
    return { view, rev, log: replayLog.filter((entry) => entry.rev <= rev), latest: position === history.length - 1 };
  }

  function step(to) {
    if (!history.length) return;
    const next = Math.max(0, Math.min(history.length - 1, to));
    position = next;
    schedule();
  }

  function togglePlay() {
    if (playing) {
      clearInterval(playing);
      playing = null;
    } else {
      if (position === null || position >= history.length - 1) position = 0;
      playing = setInterval(() => {
        if (position === null || position >= history.length - 1) {
          clearInterval(playing);
          playing = null;
        } else position += 1;
        schedule();
      }, 700);
    }
    schedule();
  }

  function drawReplay(at) {
    replayBox.hidden = false;
    if (room.result) replayBox.dataset.complete = "";
    const index = position ?? history.length - 1;
    const turns = [];
    for (const [i, entry] of history.entries()) {
      const name = board?.kind?.turnOf(entry.view) ?? `rev ${entry.rev}`;
      if (turns.at(-1)?.name !== name) turns.push({ name, index: i });
    }
    const currentTurn = [...turns].reverse().find((t) => t.index <= index);
    const slider = h("input", { type: "range", id: "replay-rev", min: 0, max: Math.max(0, history.length - 1), value: index, "aria-label": "revision" });
    slider.addEventListener("input", () => step(Number(slider.value)));
    const jump = h("select", { id: "replay-turn", "aria-label": "jump to a turn" }, turns.map((t) => h("option", { value: t.index, selected: t === currentTurn }, t.name)));
    jump.addEventListener("change", () => step(Number(jump.value)));
    fill(replayBox,
      h("div", { class: "replay-bar" },
        h("button", { type: "button", id: "replay-first", title: "the start", onclick: () => step(0) }, "|◀"),
        h("button", { type: "button", id: "replay-back", title: "one revision back", onclick: () => step(index - 1) }, "◀"),
        h("button", { type: "button", id: "replay-play", title: playing ? "pause" : "play", onclick: togglePlay }, playing ? "Pause" : "Play"),
        h("button", { type: "button", id: "replay-forward", title: "one revision forward", onclick: () => step(index + 1) }, "▶"),
        h("button", { type: "button", id: "replay-last", title: "the end", onclick: () => step(history.length - 1) }, "▶|"),
        slider,
        h("span", { class: "mono", id: "replay-at" }, `rev ${at.rev} of ${history.at(-1)?.rev ?? 0}`),
        h("label", { class: "hint" }, "jump to ", jump)));
  }

  // Drawing ----------------------------------------------------------------------------------
  // Patches may come faster than a screen shows them (bots, a replay at full speed): draw at
  // most once a frame, from the latest view.
  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    const draw = () => {
      scheduled = false;
      render();
    };
    if (document.hidden) setTimeout(draw, 250);
    else requestAnimationFrame(draw);
  }

  function render() {
    if (disposed || !room) return;
    armFollow();
    const info = room.info;
    const seats = info.seats ?? [];
    const at = shown();
    at.turn = at.view?.shared?.turn ?? null;
    at.result = at.view?.shared?.result ?? null;
    mismatches.textContent = String(room.mismatches);
    integrity.classList.toggle("bad", room.mismatches > 0);
    drawBoard(at, seats);
    if (overlay) {
      drawOverlay(seats, at);
      return;
    }
    if (mode === "replay") drawReplay(at);
    fill(badges,
      h("span", { class: "badge" }, words(info.game)),
      h("span", { class: `badge state-${info.state}`, id: "room-state" }, words(info.state)),
      h("span", { class: "badge mono", id: "rev" }, `rev ${at.rev}`),
      info.replay_of ? h("span", { class: "badge" }, `replay of ${info.replay_of}`) : null,
      room.paused ? h("span", { class: "badge warn" }, "paused: storage unavailable") : null,
      watching ? h("span", { class: "badge" }, `watching · ${info.spectators ?? 0} spectators`) : h("span", { class: "badge you" }, `you: ${seatName(seats, room.seat)}`));
    drawTurn(info, seats, at);
    drawSeats(seatsBox, seats, at);
    drawState(at);
    drawLog(seats, at);
    drawChat();
  }

  function canAct() {
    return !watching && !acting && !room.paused && !room.result && room.info.state === "playing" && room.choices.length > 0;
  }

  function drawBoard(at, seats) {
    if (!board) return;
    const choices = canAct() ? room.choices : [];
    board.panel.update({ data: board.data, view: at.view, seats, choices });
    boardBox.classList.toggle("acting", choices.length > 0);
  }

  function drawTurn(info, seats, at) {
    const parts = [];
    if (room.gone) parts.push(h("p", { class: "error" }, "This room is gone (closed, or the seat token no longer works)."));
    if (at.result) parts.push(resultTable(at.result, seats));
    else if (info.state === "open") parts.push(...openRoom(info, seats));
    else if (at.turn) {
      const mine = at.turn.seat === room.seat && !watching;
      parts.push(h("p", { class: `prompt ${mine ? "mine" : ""}`, id: "prompt" }, mine ? `Your turn: ${at.turn.prompt || words(at.turn.decision).toLowerCase()}` : promptText(at.turn, seats)));
      if (mine && board) parts.push(h("p", { class: "hint" }, "Choose below, or on the board where a choice has a place (highlighted)."));
    }
    if (!watching && room.choices.length && !room.result && info.state === "playing") {
      parts.push(h("ol", { class: "choices", id: "choices" }, room.choices.map((choice, i) =>
        h("li", {}, h("button", {
          class: "choice", type: "button", disabled: acting || room.paused, dataset: { index: i }, onclick: () => act(i),
          onmouseenter: () => board?.panel.preview(i), onfocus: () => board?.panel.preview(i), onmouseleave: () => board?.panel.preview(null),
        }, choiceText(choice, seats))))));
    }
    if (!watching && room.canUndo && !room.result && info.state === "playing") {
      parts.push(h("p", { class: "undo" }, h("button", { type: "button", id: "undo", disabled: acting, onclick: undo }, "Undo your last step")));
    }
    if (!watching && !room.result && info.state === "playing") {
      parts.push(h("p", { class: "leave" }, h("button", { type: "button", class: "quiet", onclick: leave }, "Leave (a bot plays for you until you come back)")));
    }
    const next = room.result && !room.movedTo ? room.rematchRoom : null;
    if (next) {
      parts.push(h("p", { class: "prompt went-on", id: "went-on" }, `The players went on to a new match: room ${next}.`));
      if (watching) {
        const when = followAt !== null && !staying ? h("span", { class: "hint", id: "follow-in" }, followText()) : null;
        parts.push(h("div", { class: "buttons again" },
          h("button", { class: "primary", id: "follow-rematch", type: "button", disabled: rematching, onclick: goOn }, rematching ? "Going…" : "Watch it now"),
          when ? h("button", { type: "button", class: "quiet", id: "stay", onclick: stay }, "Stay here") : null,
          when));
      } else {
        parts.push(h("div", { class: "buttons again" },
          h("button", { class: "primary", id: "follow-rematch", type: "button", disabled: rematching, onclick: goOn }, rematching ? "Joining…" : "Join the new match"),
          h("span", { class: "hint" }, `Your seat, P${room.seat + 1}, is free there: take it and play on.`)));
      }
    } else if (room.result && !watching && mode === "play") {
      parts.push(h("div", { class: "buttons again" },
        h("button", { class: "primary", id: "play-again", type: "button", disabled: rematching, onclick: playAgain }, rematching ? "Asking…" : "Play again"),
        h("span", { class: "hint" }, "The same players, in a new room: everyone here moves there.")));
    } else if (room.result && watching && mode === "watch") {
      parts.push(h("p", { class: "hint" }, "If the players play again, this page follows them to the new match."));
    }
    if (room.result || watching) parts.push(h("p", {}, h("a", { class: "button", href: "/", onclick: link("/") }, "Back to the lobby")));
    fill(turnBox, parts);
  }

  function openRoom(info, seats) {
    const free = seats.filter((s) => !s.taken && !s.bot).length;
    const url = `${location.origin}/play/${room.id}`;
    const share = h("input", { readonly: true, value: url, id: "share-link", class: "mono", onfocus: (e) => e.target.select() });
    const out = [
      h("p", { class: "prompt" }, free ? `Waiting for ${free} more player${free > 1 ? "s" : ""}.` : "Every seat is taken: start when ready."),
      h("div", { class: "share" }, h("label", { for: "share-link" }, info.public ? "Invite with this link:" : "Private room — share this link:"), share,
        h("button", { type: "button", onclick: () => copy(url) }, "Copy")),
    ];
    const buttons = [];
    if (!watching && !free) buttons.push(h("button", { class: "primary", id: "start", type: "button", onclick: () => start(false) }, "Start the match"));
    if (!watching && free && session.hosted.has(room.id)) {
      buttons.push(h("button", { class: "primary", id: "start-bots", type: "button", onclick: () => start(true) }, `Start with bots in the ${free} empty seat${free > 1 ? "s" : ""}`));
    }
    if (!watching) buttons.push(h("button", { type: "button", class: "quiet", onclick: leave }, "Leave the room"));
    out.push(h("div", { class: "buttons" }, buttons));
    return out;
  }

  function resultTable(result, seats) {
    const winners = new Set(result.winners ?? []);
    const scores = result.scores ?? [];
    // Breakdown columns that say something: not all zero, not a copy of the score.
    const breakdown = result.breakdown ?? [];
    const keys = [...new Set(breakdown.flatMap((b) => Object.keys(b ?? {})))].filter(
      (k) => breakdown.some((b, s) => Number(b?.[k] ?? 0) !== 0 && Number(b?.[k]) !== Number(scores[s])));
    return h("div", { class: "result", id: "result" },
      h("h2", {}, winners.size ? `${[...winners].map((s) => seatName(seats, s)).join(" and ")} ${winners.size > 1 ? "win" : "wins"}` : "The match is over"),
      // One column per player, one row per category: it fits a phone with four players.
      h("div", { class: "scroll" }, h("table", { class: "breakdown" },
        h("thead", {}, h("tr", {}, h("th", {}, ""), scores.map((_, s) => h("th", { class: winners.has(s) ? "winner" : "" }, seatName(seats, s), seats[s]?.forfeited ? " (forfeited)" : "")))),
        h("tbody", {},
          h("tr", { class: "total" }, h("th", {}, "Score"), scores.map((score, s) => h("td", { class: `score ${winners.has(s) ? "winner" : ""}` }, String(score)))),
          keys.map((k) => h("tr", {}, h("th", {}, categoryName(k)), scores.map((_, s) => h("td", { class: winners.has(s) ? "winner" : "" }, String(breakdown[s]?.[k] ?? "")))))))),
      result.turns !== undefined ? h("p", { class: "hint" }, `${result.turns} turns`) : null);
  }

  /** The points a seat has so far, as the board's game tells them (none without a board). */
  function runningScore(view, seat) {
    const points = board?.kind?.scoreOf?.(view, seat);
    return points === null || points === undefined ? null : h("span", { class: "score running-score", title: "points so far" }, `${points} pts`);
  }

  /** A score category in words: a skill's name from the game's data (Ishtar's A-E), else the key. */
  function categoryName(key) {
    const skill = (board?.data?.skills ?? []).find((s) => s.skill === key);
    return skill ? skill.name : words(key);
  }

  function drawSeats(box, seats, at) {
    const clock = at.view?.clock;
    const turnSeat = room.info.state === "playing" || mode === "replay" ? at.turn?.seat : undefined;
    const rows = seats.map((s) => {
      const tags = [];
      if (s.seat === room.seat && !watching) tags.push(h("span", { class: "tag you" }, "you"));
      if (s.bot) tags.push(h("span", { class: "tag" }, `${s.bot_kind ?? ""} bot`.trim()));
      if (s.standin) tags.push(h("span", { class: "tag warn" }, "bot stands in"));
      if (s.forfeited) tags.push(h("span", { class: "tag bad" }, "forfeited"));
      if (!s.taken && !s.bot && mode !== "replay") tags.push(h("span", { class: "tag" }, "free"));
      const online = s.bot || s.connected;
      const colour = board?.kind?.seatColour(board.data, s.seat);
      return h("li", { class: `seat ${s.seat === turnSeat && !at.result ? "turn" : ""}`, dataset: { seat: s.seat } },
        h("span", { class: `dot ${online ? "on" : "off"}`, title: online ? "connected" : "not connected" }),
        colour ? h("span", { class: "swatch", style: `background:${colour}`, title: "this player's colour" }) : null,
        h("span", { class: "name" }, s.name || (s.bot ? "bot" : `seat ${s.seat + 1}`)),
        h("span", { class: "hint", title: "the server's texts name this seat so" }, `P${s.seat + 1}`),
        tags,
        clock ? h("span", { class: "clock mono", dataset: { clock: s.seat } }, "") : null,
        at.result ? h("span", { class: "score" }, String(at.result.scores?.[s.seat] ?? "")) : runningScore(at.view, s.seat));
    });
    if (box === seatsBox) fill(box, h("h2", {}, "Players"), h("ul", { class: "seat-list" }, rows));
    else fill(box, rows);
    tickClocks();
  }

  function drawState(at) {
    const game = at.view?.shared?.game;
    const own = at.view?.own;
    const open = !BOARDS[room.info.game];
    const details = stateBox.querySelectorAll("details");
    const kept = [...details].map((d) => d.open);
    fill(stateBox,
      h("h2", {}, board ? "The view, in full" : "The game"),
      game ? h("details", { open: kept[0] ?? open }, h("summary", {}, "Public state"), tree(game)) : h("p", { class: "hint" }, "No view yet."),
      own?.private != null ? h("details", { open: kept[1] ?? open, class: "private" }, h("summary", {}, "Only you see this"), tree(own.private)) : null);
  }

  function drawLog(seats, at) {
    const entries = at.log.slice(-200);
    fill(logList, entries.length ? entries.map(({ rev, event }) => h("li", {}, h("span", { class: "rev mono" }, String(rev)), eventText(event, seats))) : h("li", { class: "hint" }, "Nothing yet."));
    logList.scrollTop = logList.scrollHeight;
  }

  function drawChat() {
    fill(chatList, room.chat.slice(-100).map((line) => h("li", {}, h("b", {}, line.from?.name || (line.from?.seat == null ? "spectator" : seatName(room.info.seats ?? [], line.from.seat))), " ", line.text)));
    chatList.scrollTop = chatList.scrollHeight;
    const canSay = !watching || room.info.spectator_chat;
    chatInput.disabled = !canSay || room.gone;
    chatInput.placeholder = canSay ? "say something" : "spectators cannot chat in this room";
  }

  function drawOverlay(seats) {
    fill(overlaySeats, seats.map((s) => h("div", { class: `ov-seat ${s.seat === room.turn?.seat && room.info.state === "playing" ? "turn" : ""} ${room.result?.winners?.includes(s.seat) ? "winner" : ""}`, dataset: { seat: s.seat } },
      board ? h("span", { class: "swatch", style: `background:${board.kind.seatColour(board.data, s.seat)}` }) : null,
      h("span", { class: "name" }, s.name || (s.bot ? "bot" : `seat ${s.seat + 1}`)),
      room.view?.clock ? h("span", { class: "clock mono", dataset: { clock: s.seat } }, "") : null,
      room.result ? h("span", { class: "score", dataset: { score: s.seat } }, String(room.result.scores?.[s.seat] ?? "")) : runningScore(room.view, s.seat))));
    const last = room.log.at(-1);
    if (room.result) lastEvent.textContent = `Final — ${resultLine(room.result, seats)}`;
    else lastEvent.textContent = last ? eventText(last.event, seats) : promptText(room.turn, seats) || "Waiting for the match to begin";
    lastEvent.dataset.rev = String(room.rev);
    tickClocks();
  }

  function resultLine(result, seats) {
    return (result.scores ?? []).map((score, s) => `${seatName(seats, s)} ${score}`).join(" · ");
  }

  function tickClocks() {
    if (!room) return;
    const left = room.clockLeft();
    if (!left) return;
    const running = room.info.state === "playing" ? room.view?.clock?.running : undefined;
    for (const el of element.querySelectorAll("[data-clock]")) {
      const s = Number(el.dataset.clock);
      el.textContent = clockText(left[s] ?? 0);
      el.classList.toggle("running", s === running && !room.result);
      el.classList.toggle("low", s === running && left[s] < LOW_CLOCK_MS);
    }
  }

  // Acting -----------------------------------------------------------------------------------
  async function act(index) {
    if (acting) return;
    acting = true;
    render();
    try {
      await room.act(index);
    } catch (err) {
      notify(explain(err), "error");
    } finally {
      acting = false;
      render();
    }
  }

  async function undo() {
    if (acting) return;
    acting = true;
    render();
    try {
      await room.undo();
    } catch (err) {
      notify(explain(err), "error");
    } finally {
      acting = false;
      render();
    }
  }

  async function start(bots) {
    try {
      await room.start({ bots });
    } catch (err) {
      notify(explain(err), "error");
    }
  }

  /** Play again (a rematch): the "moved" event that comes before the answer takes the page on. */
  async function playAgain() {
    if (rematching) return;
    rematching = true;
    render();
    try {
      await room.rematch();
    } catch (err) {
      notify(explain(err), "error");
    } finally {
      rematching = false;
      render();
    }
  }

  /** A spectator follows the rematch the finished room names, the final scores shown long
   * enough (`?follow=S`, FOLLOW_PAUSE_S by default) unless it chose to stay. */
  function armFollow() {
    if (!room.result || room.movedTo) return;
    endedAt ??= Date.now();
    if (!watching || followAt !== null || !room.rematchRoom) return;
    const asked = Number(ctx.params.get("follow") ?? FOLLOW_PAUSE_S);
    const pause = Number.isFinite(asked) && asked >= 0 ? asked : FOLLOW_PAUSE_S;
    followAt = Math.max(endedAt + pause * 1000, Date.now());
    followTimer = setTimeout(() => staying || goOn(), followAt - Date.now());
  }

  function followText() {
    return `Following them in ${Math.max(0, Math.ceil((followAt - Date.now()) / 1000))} s.`;
  }

  function tickFollow() {
    const shown = element.querySelector("#follow-in");
    if (shown && followAt !== null) shown.textContent = followText();
  }

  function stay() {
    staying = true;
    render();
  }

  /** To the rematch the finished room names (we were not moved: SPEC 9): watch it, or take our
   * seat there; the "moved" event that follows takes the page on. */
  async function goOn() {
    if (rematching || disposed || room.movedTo) return;
    rematching = true;
    render();
    try {
      await room.followRematch();
    } catch (err) {
      notify(explain(err), "error");
    } finally {
      rematching = false;
      render();
    }
  }

  /** A rematch moved us (SPEC 9): to the new room's page, which takes the Room the session holds. */
  function follow(e) {
    const next = e.detail.room;
    if (e.detail.asked) session.hosted.add(next.id);
    const free = (next.info.seats ?? []).filter((s) => !s.taken).length;
    notify(free ? `New match: room ${next.id}; ${free} seat${free > 1 ? "s" : ""} free (a player had left).` : `New match with the same players: room ${next.id}.`);
    go(`/${next.spectator ? "watch" : "play"}/${encodeURIComponent(next.id)}${location.search}`);
  }

  async function leave() {
    try {
      await room.leave();
    } catch (err) {
      notify(explain(err), "error");
    }
    go("/");
  }

  async function copy(text) {
    try {
      await navigator.clipboard.writeText(text);
      notify("Link copied.");
    } catch {
      notify("Select the link and copy it.");
    }
  }

  enter();
  return {
    element,
    dispose() {
      disposed = true;
      for (const t of timers) clearInterval(t);
      clearTimeout(followTimer);
      if (playing) clearInterval(playing);
      if (room) {
        for (const kind of ["change", "events", "chat", "pause"]) room.removeEventListener(kind, schedule);
        room.removeEventListener("change", record);
        room.removeEventListener("events", recordEvents);
        room.removeEventListener("moved", follow);
        if (watching && !room.gone && !room.movedTo) room.leave().catch(() => {});
      }
    },
  };
}
