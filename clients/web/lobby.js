// The lobby: your name, a new match (game, players, bots, public or private, clock), quick
// match, join or watch by id, and the public rooms, refreshed every few seconds (the protocol
// has no lobby subscription: `list_rooms` is cheap and bounded). The rooms come in pages: the
// first one, then as many more as "More rooms" asked for (at most MAX_PAGES).

import { h, fill, explain, words } from "./ui.js";

const REFRESH_MS = 3000;
const MAX_PAGES = 5;
const CLOCKS = [
  ["", "No clock"],
  ["120+3", "2 min + 3 s per decision"],
  ["300+5", "5 min + 5 s per decision"],
  ["600+10", "10 min + 10 s per decision"],
  ["1800+0", "30 min, no increment"],
];

export function lobbyView(ctx) {
  const { session, notify, go, link } = ctx;
  const games = session.games.filter((g) => g !== "tiny" || session.games.length === 1);
  const allGames = session.games;
  let disposed = false;

  const gameSelect = (id) => h("select", { id, name: "game" }, allGames.map((g) => h("option", { value: g, selected: g === games[0] }, words(g))));
  const playersSelect = (id) => h("select", { id, name: "players" }, [2, 3, 4].map((n) => h("option", { value: n }, `${n} players`)));

  const name = h("input", { id: "name", name: "name", maxlength: 32, placeholder: "your name", value: ctx.playerName(), autocomplete: "nickname" });
  name.addEventListener("input", () => ctx.setPlayerName(name.value));
  const who = () => {
    ctx.setPlayerName(name.value);
    return name.value.trim() || "player";
  };

  // New match -----------------------------------------------------------------------------
  const game = gameSelect("create-game");
  const players = playersSelect("create-players");
  const bots = h("select", { id: "create-bots", name: "bots" });
  const fillBots = () => {
    const n = Number(players.value);
    const keep = Math.min(Number(bots.value || n - 1), n - 1);
    fill(bots, Array.from({ length: n }, (_, i) => h("option", { value: i, selected: i === keep }, i === 0 ? "no bots" : `${i} bot${i > 1 ? "s" : ""}`)));
  };
  players.addEventListener("change", fillBots);
  fillBots();
  const botKind = h("select", { id: "create-bot", name: "bot" }, h("option", { value: "heuristic" }, "good bots"), h("option", { value: "random" }, "random bots"));
  const isPublic = h("input", { type: "checkbox", id: "create-public", checked: true });
  const clock = h("select", { id: "create-clock" }, CLOCKS.map(([v, t]) => h("option", { value: v }, t)));
  const createButton = h("button", { type: "submit", id: "create", class: "primary" }, "Create and sit down");

  const createForm = h(
    "form",
    { class: "card", id: "create-form" },
    h("h2", {}, "New match"),
    h("div", { class: "fields" },
      field("Game", game), field("Players", players), field("Bots", bots), field("Bot kind", botKind), field("Clock", clock),
      h("label", { class: "check" }, isPublic, " listed in public rooms (else: private, by link only)")),
    createButton,
  );
  createForm.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(createButton, async () => {
      const options = { game: game.value, players: Number(players.value), public: isPublic.checked };
      const nbots = Number(bots.value);
      if (nbots > 0) Object.assign(options, { bots: nbots, bot: botKind.value });
      if (clock.value) {
        const [initial, increment] = clock.value.split("+").map(Number);
        options.clock = { initial, increment };
      }
      const ack = await session.create(options);
      session.hosted.add(ack.room);
      await session.join(ack.room, { name: who() });
      go(`/play/${ack.room}`);
    });
  });

  // Quick match ------------------------------------------------------------------------------
  const quickGame = gameSelect("quick-game");
  const quickPlayers = playersSelect("quick-players");
  const quickButton = h("button", { type: "submit", id: "quick" }, "Find a match");
  const quickForm = h("form", { class: "card", id: "quick-form" }, h("h2", {}, "Quick match"),
    h("p", { class: "hint" }, "Sit in the oldest public room waiting for players, or open one. It starts when full."),
    h("div", { class: "fields" }, field("Game", quickGame), field("Players", quickPlayers)), quickButton);
  quickForm.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(quickButton, async () => {
      const room = await session.quick(quickGame.value, Number(quickPlayers.value), who());
      go(`/play/${room.id}`);
    });
  });

  // By id ----------------------------------------------------------------------------------
  const roomId = h("input", { id: "room-id", placeholder: "room id or link", autocomplete: "off" });
  const idOf = () => roomId.value.trim().split("/").filter(Boolean).pop() ?? "";
  const joinButton = h("button", { type: "submit", id: "join" }, "Join");
  const watchButton = h("button", { type: "button", id: "watch" }, "Watch");
  const byIdForm = h("form", { class: "card", id: "join-form" }, h("h2", {}, "Have a room id?"),
    h("div", { class: "fields" }, field("Room", roomId)), h("div", { class: "buttons" }, joinButton, watchButton));
  byIdForm.addEventListener("submit", (event) => {
    event.preventDefault();
    if (idOf()) go(`/play/${idOf()}`);
  });
  watchButton.addEventListener("click", () => idOf() && go(`/watch/${idOf()}`));

  // Public rooms -------------------------------------------------------------------------
  const rooms = h("tbody", { id: "rooms" });
  const updated = h("span", { class: "hint", id: "rooms-updated" });
  const table = h("table", { class: "rooms" },
    h("thead", {}, h("tr", {}, ["Room", "Game", "Seats", "State", "Watching", ""].map((t) => h("th", {}, t)))), rooms);
  const more = h("button", { type: "button", id: "rooms-more", hidden: true }, "More rooms");
  const listing = h("section", { class: "card wide" }, h("h2", {}, "Public rooms ", updated), table, more);
  let pages = 1;
  more.addEventListener("click", () => {
    pages = Math.min(MAX_PAGES, pages + 1);
    refresh();
  });

  async function refresh() {
    if (disposed) return;
    try {
      const list = [];
      let after = null;
      for (let page = 0; page < pages; page++) {
        const answer = await session.listRoomsPage(after ? { after } : {});
        list.push(...answer.rooms);
        after = answer.next;
        if (!after) break;
      }
      if (disposed) return;
      fill(rooms, list.length ? list.map(roomRow) : h("tr", {}, h("td", { colspan: 6, class: "hint" }, "No public rooms right now: create one.")));
      more.hidden = !after || pages >= MAX_PAGES;
      updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      updated.textContent = explain(err);
    }
  }

  function roomRow(info) {
    const seats = info.seats ?? [];
    const taken = seats.filter((s) => s.taken || s.bot).length;
    const mine = session.holdsSeat(info.room);
    const open = info.state === "open" && taken < info.players;
    const actions = [];
    if (mine) actions.push(h("a", { class: "button", href: `/play/${info.room}`, onclick: link(`/play/${info.room}`) }, "Back to my seat"));
    else if (open) actions.push(h("a", { class: "button primary", href: `/play/${info.room}`, onclick: link(`/play/${info.room}`) }, "Join"));
    actions.push(h("a", { class: "button", href: `/watch/${info.room}`, onclick: link(`/watch/${info.room}`) }, "Watch"));
    const names = seats.map((s) => (s.bot ? "bot" : s.taken ? s.name || "player" : "·")).join(", ");
    return h("tr", { dataset: { room: info.room } },
      h("td", { class: "mono" }, info.room),
      h("td", {}, words(info.game), info.clock ? h("span", { class: "badge" }, "clock") : null),
      h("td", { title: names }, `${taken}/${info.players}`),
      h("td", {}, words(info.state)),
      h("td", {}, String(info.spectators ?? 0)),
      h("td", { class: "actions" }, actions));
  }

  refresh();
  const timer = setInterval(refresh, REFRESH_MS);

  async function busy(button, work) {
    button.disabled = true;
    try {
      await work();
    } catch (err) {
      notify(explain(err), "error");
    } finally {
      button.disabled = false;
    }
  }

  const element = h("div", { class: "lobby" },
    h("section", { class: "card intro" }, h("h1", {}, "Oasis"), h("p", {}, "Ishtar and Yspahan, live, against friends or bots."), field("Your name", name)),
    createForm, quickForm, byIdForm, listing);
  return {
    element,
    dispose() {
      disposed = true;
      clearInterval(timer);
    },
  };
}

function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}
