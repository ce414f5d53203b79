// A minimal frontend on oasis.js alone: it opens a 2-player match against a server bot and lets
// you play it with the server's words only: the prompt of the decision, a button per choice
// with its label, each event's text, the final scores. No board, no rules, no game knowledge:
// any game the server hosts plays the same way. Open /web/examples/index.html?game=ishtar
// (default yspahan; &auto=1 takes the first choice by itself, to watch a match go by).

import { Session, ServerError } from "/web/oasis.js";

const params = new URLSearchParams(location.search);
const game = params.get("game") || "yspahan";
const auto = params.get("auto") === "1";
const $ = (id) => document.getElementById(id);

function button(text, onclick) {
  const b = document.createElement("button");
  b.textContent = text;
  b.className = "choice";
  b.style.cssText = "display:block;width:100%;text-align:left;margin:0.2rem 0;padding:0.4rem";
  b.addEventListener("click", onclick);
  return b;
}

function item(list, text, first = false) {
  const li = document.createElement("li");
  li.textContent = text;
  if (first) list.prepend(li);
  else list.append(li);
}

async function main() {
  const session = await new Session().open(); // this page's server, hello and welcome
  session.addEventListener("status", (e) => ($("status").textContent = e.detail.text));
  const created = await session.create({ game, players: 2, bots: 1, bot: "random" });
  const room = await session.join(created.room, { name: "example" });
  $("status").textContent = `Playing ${game} in room ${room.id} as seat ${room.seat + 1}`;

  const name = (seat) => room.info.seats?.[seat]?.name || `seat ${seat + 1}`;
  let sending = false;

  async function choose(index) {
    if (sending) return;
    sending = true;
    try {
      await room.act(index); // the index into room.choices (or the choice map itself)
    } catch (err) {
      // stale_rev: the match moved on first; the next view brings new choices.
      if (!(err instanceof ServerError && err.code === "stale_rev")) $("status").textContent = err.message;
    } finally {
      sending = false;
      draw();
    }
  }

  function draw() {
    const result = room.result;
    const choices = room.myTurn && !sending ? room.choices : [];
    $("choices").replaceChildren(...choices.map((c, i) => button(c.label ?? c.kind, () => choose(i))));
    if (result) {
      $("prompt").textContent = "The match is over.";
      $("result").replaceChildren();
      result.scores.forEach((score, seat) => item($("result"), `${name(seat)}: ${score}${result.winners.includes(seat) ? " (wins)" : ""}`));
      $("result").dataset.done = "";
      return;
    }
    const turn = room.turn;
    if (!turn) $("prompt").textContent = "Waiting for the match to start…";
    else if (turn.seat === room.seat) $("prompt").textContent = `Your turn: ${turn.prompt}`;
    else $("prompt").textContent = `${name(turn.seat)}: ${turn.prompt}`;
    if (auto && choices.length) setTimeout(() => choose(0), 50);
  }

  room.addEventListener("events", (e) => {
    for (const event of e.detail.events) item($("log"), `${e.detail.rev}: ${event.text ?? event.kind}`, true);
  });
  room.addEventListener("change", draw);
  await room.start(); // every seat is taken (ours and the bot's): go
  draw();
}

main().catch((err) => {
  $("status").textContent = `Cannot play: ${err.message}`;
  console.error(err);
});
