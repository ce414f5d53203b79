"""A heuristic Yspahan player that reads only its seat's view.

It values every legal choice in victory points, roughly: goods by the souks they complete (a
complete souk scores at every remaining week's end), camels, gold and cards at fixed exchange
rates that fall as the match nears its end, buildings by their VP and powers, steward moves by
the caravan places and the broken souks they cause. Component data (souk values, the steward's
path, building prices) comes from the game's static data, the document any client downloads from
``GET /games/yspahan`` (:mod:`server.gamedata`); nothing reads the game state or the engine.

Cards: it adds cards as extra dice one at a time while one more die is worth more than the card
(so several on one group when that pays); it opens the card list in the middle of a turn to
afford keeping its own good (3 camels, or the exchange), or when a card is worth playing at all
(a little less than after the action, where it usually plays them); once the list is open it
plays its best card rather than go back, so it never opens and closes the list in a loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any


class _Tables:
    """What the static data says, indexed for the valuations."""

    def __init__(self, static: Mapping[str, Any]) -> None:
        self.souk_vp: dict[str, int] = {s["souk"]: int(s["points"]) for s in static["souks"]}
        self.souks_of: dict[str, list[str]] = {
            q["quarter"]: list(q["souks"]) for q in static["quarters"]
        }
        self.shop_souk: dict[str, tuple[str, int]] = {
            shop: (s["souk"], i) for s in static["souks"] for i, shop in enumerate(s["shops"])
        }
        squares = static["steward"]["squares"]
        self.faces: dict[str, list[str]] = {sq["square"]: list(sq["faces"]) for sq in squares}
        self.where: dict[str, tuple[str, int]] = {
            sq["square"]: (str(sq["arm"]), int(sq["distance"])) for sq in squares
        }
        self.buildings: dict[str, tuple[int, int]] = {
            b["building"]: (int(b["camels"]), int(b["gold"])) for b in static["buildings"]
        }
        self.building_points: list[int] = [int(v) for v in static["building_points"]]
        self.weeks = int(static["weeks"])

    def distance(self, a: str, b: str) -> int:
        """Squares between ``a`` and ``b`` along the path (a cross: one way between two)."""
        (arm_a, da), (arm_b, db) = self.where[a], self.where[b]
        return abs(da - db) if arm_a == arm_b else da + db


class _Seen:
    """The facts of one view the valuations need."""

    def __init__(self, t: _Tables, shared: Mapping[str, Any], own: Mapping[str, Any]) -> None:
        self.t = t
        g = shared.get("game") or {}
        self.g = g
        self.me: int = int(own["seat"])
        self.hand: list[str] = list((own.get("private") or {}).get("hand") or [])
        self.players: list[Mapping[str, Any]] = list(g.get("players") or [])
        self.mine = self.players[self.me]
        self.city: Mapping[str, list[int | None]] = g.get("city") or {}
        self.week = int(g.get("week", 1))
        self.day = int(g.get("day", 1))
        # What fraction of the match is still to come (1 at the start, ~0 at the very end).
        weeks = t.weeks
        self.left = max(0.0, ((weeks - self.week) * 7 + (7 - self.day) + 1) / (weeks * 7))
        self.weeks_left = weeks - self.week + 1
        self.built = set(self.mine.get("buildings") or [])

    @property
    def gold_value(self) -> float:
        return 0.25 + 0.45 * self.left

    @property
    def camel_value(self) -> float:
        return 0.45 + 0.7 * self.left

    @property
    def card_value(self) -> float:
        return 0.6 + 1.0 * self.left

    def souk_value(self, souk: str) -> float:
        """A complete souk of mine: its VP at each remaining week's end (a little discounted)."""
        vp = self.t.souk_vp[souk] + (2 if "bazaar" in self.built else 0)
        return vp * (1.0 + 0.6 * (self.weeks_left - 1))

    def quarter_gain(self, quarter: str, goods: int) -> float:
        """What ``goods`` placed in ``quarter`` are worth, placed well."""
        if goods <= 0:
            return 0.0
        souks = [(sid, self.city.get(sid) or []) for sid in self.t.souks_of.get(quarter, [])]
        value = 0.0
        for sid, shops in souks:  # my partly filled souks come first (the rules say so)
            owners = {o for o in shops if o is not None}
            empty = sum(1 for o in shops if o is None)
            if owners == {self.me} and empty:
                used = min(empty, goods)
                goods -= used
                value += self._partial(sid, len(shops), len(shops) - empty + used)
                if goods <= 0:
                    return value
        free = [(sid, len(shops)) for sid, shops in souks if all(o is None for o in shops)]
        best = 0.0
        for k in range(len(free) + 1):
            for combo in combinations(free, k):
                need = sum(n for _, n in combo)
                if need > goods:
                    continue
                v = sum(self.souk_value(sid) for sid, _ in combo)
                rest = goods - need
                others = [f for f in free if f not in combo]
                if rest and others:
                    v += max(self._partial(sid, n, min(rest, n)) for sid, n in others)
                best = max(best, v)
        return value + best

    def _partial(self, souk: str, size: int, filled: int) -> float:
        if filled >= size:
            return self.souk_value(souk)
        return self.souk_value(souk) * 0.35 * filled / size

    def build_value(self, building: str) -> float:
        camels, gold = self.t.buildings[building]
        points = self.t.building_points
        vp = float(points[min(len(self.built), len(points) - 1)])
        power = {
            "pen": 2.5,
            "stall": 2.5,
            "hammam": 1.0,
            "caravanserai": 2.0,
            "bazaar": 6.0,
            "crane": 3.0,
        }[building] * self.left
        cost = camels * self.camel_value + gold * self.gold_value
        return 4.0 + vp + power - 0.5 * cost

    def steward_value(self, square: str) -> float:
        """Goods faced at ``square`` go to the caravan (their owner scores) unless kept."""
        total = 0.0
        for shop in self.t.faces[square]:
            sid, slot = self.t.shop_souk[shop]
            shops = self.city.get(sid) or []
            owner = shops[slot] if slot < len(shops) else None
            if owner is None:
                continue
            complete = all(o is not None for o in shops)
            camels = int(self.players[owner].get("camels", 0))
            loss = self.souk_value(sid) if complete and camels == 0 else 0.0
            loss += 0.0 if camels == 0 else self.camel_value * (1.0 if complete else 0.0)
            if owner == self.me:
                total += 1.6 - loss
            else:
                total += -1.6 + 0.6 * loss
        return total


class YspahanScorer:
    def __init__(self, static: Mapping[str, Any]) -> None:
        self.tables = _Tables(static)

    def score(self, shared: Mapping[str, Any], own: Mapping[str, Any]) -> Sequence[float]:
        seen = _Seen(self.tables, shared, own)
        return [self._one(seen, c) for c in own["choices"]]

    def _one(self, s: _Seen, c: Mapping[str, Any]) -> float:
        kind = c.get("kind")
        if kind == "take":
            return self._take(s, c)
        if kind == "extra":
            return self._extra(s, c.get("card"))
        if kind == "cards":
            return self._open_cards(s)
        if kind == "back":
            return -10.0
        if kind == "place":
            return self._place(s, str(c["shop"]))
        if kind == "move":
            return s.steward_value(str(c["to"])) - int(c.get("gold", 0)) * s.gold_value
        if kind == "keep":
            return self._keep(s, str(c["shop"]), bool(c["pay"]))
        if kind == "send":
            return 0.0
        if kind == "build":
            return s.build_value(str(c["building"]))
        if kind == "yellow":
            dice = int(c["dice"])
            return dice * (0.9 * s.left + 0.2) - dice * 2 * s.gold_value * 0.9
        if kind == "play":
            return self._play(s, str(c["card"]))
        if kind in ("pay", "swap"):
            return self._amount(s, c)
        if kind == "end":
            return 0.0
        return 0.0

    def _size(self, s: _Seen, floor: str) -> int:
        for f in s.g.get("tower") or []:
            if f.get("floor") == floor:
                order = s.g.get("order") or []
                roller = bool(order) and order[0] == s.me
                if roller or len(s.players) != 2:
                    return int(f["white"]) + int(f["yellow"])
                return int(f["white"])
        return 0

    def _take(self, s: _Seen, c: Mapping[str, Any]) -> float:
        floor = str(c["floor"])
        action = c.get("action")
        size = self._size(s, floor)
        if action == "card":
            return s.card_value
        if action == "build":
            return max(
                (
                    s.build_value(b)
                    for b in s.t.buildings
                    if b not in s.built and self._afford(s, b)
                ),
                default=-5.0,
            )
        if action == "steward":
            value = 0
            for f in s.g.get("tower") or []:
                if f.get("floor") == floor:
                    value = int(f["value"])
            here = str(s.g.get("steward", "C"))
            best = -1.0
            for square in s.t.faces:
                if square == here:
                    continue  # the steward must move
                gap = abs(s.t.distance(here, square) - value)
                if gap <= int(s.mine.get("gold", 0)):
                    best = max(best, s.steward_value(square) - gap * s.gold_value)
            return best
        return self._floor_gain(s, floor, size)

    @staticmethod
    def _floor_gain(s: _Seen, floor: str, size: int) -> float:
        """What the floor action of ``floor`` with ``size`` dice is worth."""
        if floor == "camels":
            n = size + (1 if "pen" in s.built else 0)
            return n * s.camel_value
        if floor == "gold":
            n = size + (2 if "stall" in s.built else 0)
            return n * s.gold_value
        n = size + (1 if "crane" in s.built else 0)
        return s.quarter_gain(floor, n)

    def _extra(self, s: _Seen, card: object) -> float:
        """One more die for the group being taken, against what the card is worth kept."""
        if not isinstance(card, str):
            return 0.0
        pending = s.g.get("pending") or {}
        floor = str(pending.get("floor"))
        size = self._size(s, floor) + int(pending.get("extra", 0))
        more = self._floor_gain(s, floor, size + 1) - self._floor_gain(s, floor, size)
        return more - max(s.card_value, s.card_value + self._play(s, card)) - 0.3

    def _open_cards(self, s: _Seen) -> float:
        """Open the card list mid-turn: to afford keeping one's own good, or for a good card."""
        best = max((self._play(s, card) for card in set(s.hand)), default=-1.0)
        queue = (s.g.get("pending") or {}).get("queue") or []
        no_camel = int(s.mine.get("camels", 0)) == 0
        gives_camel = "3_camels" in s.hand or (
            "swap_camels_gold" in s.hand and int(s.mine.get("gold", 0)) > 0
        )
        if queue and no_camel and gives_camel:
            best = max(best, self._keep(s, str(queue[0]), True))
        if (s.g.get("pending") or {}).get("floor"):
            return best - 1.0  # while adding extra dice: an effect is as good after the action
        return best - 0.2

    @staticmethod
    def _afford(s: _Seen, building: str) -> bool:
        camels, gold = s.t.buildings[building]
        return int(s.mine.get("camels", 0)) >= camels and int(s.mine.get("gold", 0)) >= gold

    def _place(self, s: _Seen, shop: str) -> float:
        sid, _ = s.t.shop_souk[shop]
        shops = s.city.get(sid) or []
        state = s.g.get("pending") or {}
        pending = 1 if state.get("card") == "place_board" else int(state.get("goods", 1))
        empty = sum(1 for o in shops if o is None)
        size = len(shops)
        mine = any(o == s.me for o in shops)
        if mine:
            return 100.0 + s.souk_value(sid)
        if empty <= pending:
            return 50.0 + s.souk_value(sid) + size * 0.01
        return s.souk_value(sid) * pending / size

    def _keep(self, s: _Seen, shop: str, pay: bool) -> float:
        if not pay:
            return 0.0
        sid, _ = s.t.shop_souk[shop]
        shops = s.city.get(sid) or []
        filled = sum(1 for o in shops if o is not None)
        worth = s.souk_value(sid) * (1.0 if filled == len(shops) else 0.4 * filled / len(shops))
        return worth - s.camel_value

    def _play(self, s: _Seen, card: str) -> float:
        if card in ("3_camels",):
            return 3 * s.camel_value - s.card_value + 0.1
        if card in ("3_gold",):
            return 3 * s.gold_value - s.card_value + 0.1
        if card == "place_caravan":
            return 2.0 - s.card_value + 0.5
        if card == "place_board":
            return 1.0 - s.card_value + 0.8
        if card in ("score_gold", "score_camels"):
            gold, camels = int(s.mine.get("gold", 0)), int(s.mine.get("camels", 0))
            if card == "score_gold":
                return min(gold, 10) * (1 - s.gold_value) - s.card_value
            return min(camels, 4) * (2 - s.camel_value) - s.card_value
        return -1.0

    def _amount(self, s: _Seen, c: Mapping[str, Any]) -> float:
        if c.get("kind") == "pay":
            if "gold" in c:
                return int(c["gold"]) * (1 - s.gold_value)
            return int(c["camels"]) * (2 - s.camel_value)
        n = int(c.get("camels", 0))  # swap: positive buys camels with gold
        return n * (s.camel_value - s.gold_value)
