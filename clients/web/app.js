// The browser client: one page for the lobby (/), a seat (/play/<room>), a spectator
// (/watch/<room>, ?overlay=1 for streams) and a replay (/replay/<room>), on one oasis.js Session.
// Moving from the lobby to a room keeps the connection, so the page that created a room stays
// its host; a reload starts afresh and resumes the seat from the token in localStorage.

import { Session } from "./oasis.js";
import { h, fill, explain } from "./ui.js";
import { lobbyView } from "./lobby.js";
import { roomView } from "./room.js";

const params = new URLSearchParams(location.search);
const overlay = params.get("overlay") === "1";
if (overlay) document.documentElement.classList.add("overlay");

const session = new Session(undefined, { name: "oasis-web/0.1" });
/** Rooms this page created (it is their host while the connection lasts). */
session.hosted = new Set();
globalThis.oasis = { session }; // for a curious person at the console

const root = document.getElementById("app");
const status = h("span", { class: "status", id: "status", title: "connection" }, "connecting");
const notices = h("div", { class: "notices", id: "notices", "aria-live": "polite" });
let current = null;

export function notify(text, kind = "info") {
  const item = h("p", { class: `notice ${kind}` }, text);
  notices.append(item);
  setTimeout(() => item.remove(), kind === "error" ? 8000 : 4000);
}

export function go(path) {
  history.pushState(null, "", path);
  route();
}

export function playerName() {
  return localStorage.getItem("oasis:name") || "";
}

export function setPlayerName(name) {
  localStorage.setItem("oasis:name", name.trim().slice(0, 32));
}

session.addEventListener("status", (e) => {
  const { state } = e.detail;
  status.textContent = { open: "connected", reconnecting: "reconnecting…", connecting: "connecting…", closed: "closed" }[state] ?? state;
  status.className = `status ${state}`;
});

function shell(content) {
  if (overlay) return fill(root, content, notices);
  const header = h(
    "header",
    { class: "top" },
    h("a", { href: "/", class: "brand", onclick: link("/") }, h("img", { src: "/web/icon.svg", alt: "" }), "Oasis"),
    status,
  );
  return fill(root, header, h("main", {}, content), notices);
}

export function link(path) {
  return (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button === 1) return;
    event.preventDefault();
    go(path);
  };
}

function route() {
  current?.dispose?.();
  current = null;
  const parts = location.pathname.split("/").filter(Boolean);
  const ctx = { session, notify, go, link, playerName, setPlayerName, overlay, params: new URLSearchParams(location.search) };
  if (parts.length === 0) {
    current = lobbyView(ctx);
    document.title = "Oasis";
  } else if (parts.length === 2 && ["play", "watch", "replay"].includes(parts[0])) {
    current = roomView(ctx, parts[0], decodeURIComponent(parts[1]));
    document.title = `Oasis · ${parts[0]} ${parts[1]}`;
  } else {
    current = { element: h("p", {}, "No such page. ", h("a", { href: "/", onclick: link("/") }, "Back to the lobby")) };
  }
  shell(current.element);
}

window.addEventListener("popstate", route);
window.addEventListener("unhandledrejection", (event) => {
  // Every request of the pages is awaited with its error shown; this shows a missed one too
  // (and leaves it to the console, where the browser tests look for it).
  notify(explain(event.reason), "error");
});

session
  .open()
  .then(route)
  .catch((err) => {
    fill(root, h("main", {}, h("h1", {}, "Oasis"), h("p", { class: "error" }, `Cannot reach the server: ${explain(err)}`), h("button", { onclick: () => location.reload() }, "Try again")));
  });
