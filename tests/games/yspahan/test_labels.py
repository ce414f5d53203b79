"""Yspahan's wording and consequences (games/yspahan/labels.py): every choice, decision and event
kind says what it does with its facts; a steward move's ``effects`` are the goods it sends, a
placement's the souk it fills; the drawer alone reads which card it drew; the final view shows
every hand and the shared view says whether the player has built this turn.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.base import Event, Match, own_part, shared_part
from games.rng import Rng
from games.yspahan import GAME, data, labels
from games.yspahan.labels import card_name, good_in
from games.yspahan.nouns import BUILDING_NAMES, CARD_TEXTS

Sample = dict[str, Any]


def _collect() -> tuple[dict[str, list[Sample]], dict[str, list[str]], dict[str, list[Sample]]]:
    choices: dict[str, list[Sample]] = {}
    prompts: dict[str, list[str]] = {}
    events: dict[str, list[Sample]] = {}
    for m in range(12):
        players = 2 + m % 3
        match = Match.new(GAME, players, {}, 700 + m)
        chooser = Rng.from_seed(m)
        while (decision := match.decision) is not None:
            state = match.state
            for c in own_part(GAME, state, decision.seat, decision)["choices"]:
                assert isinstance(c, dict)
                found = choices.setdefault(str(c["kind"]), [])
                if len(found) < 40:
                    found.append({**c, "_shops": list(state.shops), "_steward": state.steward})
            turn = shared_part(GAME, state, decision)["turn"]
            assert isinstance(turn, dict)
            prompts.setdefault(decision.kind, []).append(str(turn["prompt"]))
            for e in match.act(decision.seat, chooser.below(len(decision.choices))):
                found = events.setdefault(e.kind, [])
                if len(found) < 40:
                    found.append(
                        {
                            "data": dict(e.data),
                            "private": {s: dict(p) for s, p in e.private.items()},
                            "public": e.project(None)["text"],
                            "seen": {s: e.project(s)["text"] for s in range(players)},
                        }
                    )
    return choices, prompts, events


CHOICES, PROMPTS, EVENTS = _collect()


def _move(c: Sample) -> list[str]:
    squares = data.DISTANCE[c["_steward"]][data.SQUARE_INDEX[c["to"]]]
    facts = [f"to {c['to']}", f"{squares} square"]
    facts += [f"paying {c['gold']} gold"] if c["gold"] else []
    facts += [good_in(s["shop"]) for s in c["effects"]["sends"]] or ["sends nothing"]
    return facts


CHOICE_FACTS: dict[str, Any] = {
    "yellow": lambda c: [f"{c['dice']} yellow di"] if c["dice"] else ["without yellow dice"],
    "take": lambda c: [f"the {c['floor']} group"],
    "extra": lambda c: [card_name(c["card"]), "one more die"] if c["card"] else ["no more cards"],
    "cards": lambda c: ["play a card first"],
    "back": lambda c: ["play no card"],
    "play": lambda c: [card_name(c["card"]), CARD_TEXTS[c["card"]]],
    "draw": lambda c: ["draw a card"],
    "pass": lambda c: ["pass"],
    "place": lambda c: [c["shop"], good_in(c["shop"]), f"souk {c['effects']['souk']}"],
    "move": _move,
    "send": lambda c: [c["shop"], "first"],
    "keep": lambda c: [c["shop"], "pay a camel" if c["pay"] else "go to the caravan"],
    "build": lambda c: [BUILDING_NAMES[c["building"]]],
    "pay": lambda c: [
        f"{c.get('gold', c.get('camels'))}" if c.get("gold", c.get("camels")) else "no"
    ],
    "swap": lambda c: ["camel" if c["camels"] else "nothing"],
    "end": lambda c: ["end your turn"],
}


@pytest.mark.parametrize("kind", sorted(CHOICE_FACTS))
def test_every_choice_kind_is_labelled_with_its_facts(kind: str) -> None:
    samples = CHOICES.get(kind, [])
    if kind in ("pass", "send") and not samples:
        return  # rare in random matches; the label is a fixed text or checked below
    assert samples, f"no {kind} choice in the random matches"
    for c in samples:
        for fact in CHOICE_FACTS[kind](c):
            assert fact in c["label"], (fact, c["label"])


def test_ysp_steward_10_a_move_lists_the_goods_it_sends_to_the_caravan() -> None:
    """YSP-STEWARD-10: every good in the faced shops goes; the effects name them in order."""
    for c in CHOICES["move"]:
        faced = data.SQUARES[data.SQUARE_INDEX[c["to"]]].faces
        want = [
            {"shop": data.SHOP_IDS[s], "seat": c["_shops"][s]} for s in faced if c["_shops"][s] >= 0
        ]
        assert c["effects"] == {"sends": want}
    assert any(c["effects"]["sends"] for c in CHOICES["move"]), "some move sent goods"


def test_ysp_goods_08_a_placement_says_which_souk_it_fills_and_when_complete() -> None:
    """YSP-GOODS-08: a souk is complete when every shop holds a good."""
    for c in CHOICES["place"]:
        shop = data.SHOP_INDEX[c["shop"]]
        souk = data.SOUKS[data.SHOP_SOUK[shop]]
        filled = sum(1 for s in souk.shops if c["_shops"][s] >= 0) + 1
        assert c["effects"] == {"souk": souk.id, "filled": filled, "shops": len(souk.shops)}
        assert ("completes it" in c["label"]) == (filled == len(souk.shops))


def test_every_decision_has_its_own_prompt() -> None:
    assert set(PROMPTS) <= set(labels.PROMPTS)
    assert {"yellow", "turn", "place", "steward", "after"} <= set(PROMPTS)
    firsts = {kind: prompts[0] for kind, prompts in PROMPTS.items()}
    assert len(set(firsts.values())) == len(firsts)


def _who(d: Any) -> str:
    return f"P{d['seat'] + 1}"


EVENT_FACTS: dict[str, Any] = {
    "day": lambda d: [f"week {d['week']}, day {d['day']}"],
    "roll": lambda d: [_who(d), f"{len(d['white'])} white dice"],
    "take": lambda d: (
        [_who(d), f"the {d['floor']} group", f"showing {d['value']}"]
        + ([f"{d['extra_dice']} card"] if d.get("extra_dice") else [])
    ),
    "gain": lambda d: [_who(d), str(d.get("camels", d.get("gold")))],
    "extra_die": lambda d: [_who(d), card_name(d["card"])],
    "place": lambda d: [_who(d), d["shop"], good_in(d["shop"])],
    "overflow": lambda d: [_who(d), "reserve"],
    "move": lambda d: [_who(d), f"from {d['from']} to {d['to']}"],
    "caravan": lambda d: [f"caravan place {d['place']}", f"P{d['seat'] + 1}"],
    "score": lambda d: [_who(d), f"{d['points']} point"],
    "keep": lambda d: [_who(d), d["shop"], "camel"],
    "draw": lambda d: [_who(d), "draws a card"],
    "no_card": lambda d: [_who(d), "no card"],
    "reshuffle": lambda d: ["shuffled"],
    "play": lambda d: [_who(d), card_name(d["card"])],
    "swap": lambda d: [_who(d)],
    "build": lambda d: [_who(d), BUILDING_NAMES[d["building"]]],
    "pass": lambda d: [_who(d), "passes"],
    "no_build": lambda d: [_who(d), "pays for nothing"],
    "end_turn": lambda d: [_who(d), "ends their turn"],
    "yellow_removed": lambda d: ["yellow dice"],
    "day_end": lambda d: [f"day {d['day']} of week {d['week']}"],
    "city_emptied": lambda d: ["city"],
    "caravan_emptied": lambda d: ["caravan"],
    "week_end": lambda d: [f"week {d['week']}", d["steward"]],
    "game_end": lambda d: ["the game is over"],
}


@pytest.mark.parametrize("kind", sorted(EVENT_FACTS))
def test_every_event_kind_is_told_with_its_facts(kind: str) -> None:
    samples = EVENTS.get(kind, [])
    if not samples and kind in (
        "no_card",
        "pass",
        "overflow",
        "reshuffle",
        "keep",
        "caravan_emptied",
        "no_build",
    ):
        return  # not reached by every seed
    assert samples, f"no {kind} event in the random matches"
    for sample in samples:
        for fact in EVENT_FACTS[kind](sample["data"]):
            assert fact in sample["public"], (fact, sample["public"])


def test_the_texts_tables_have_every_kind() -> None:
    assert set(EVENTS) <= set(labels.EVENTS) == set(EVENT_FACTS)
    assert set(CHOICES) <= set(labels.CHOICES) == set(CHOICE_FACTS)


def test_ysp_view_03_the_drawer_alone_reads_which_card_it_drew() -> None:
    """YSP-VIEW-03: a card drawn is shown to its drawer only, in the event and in its text."""
    for sample in EVENTS["draw"]:
        drawer = sample["data"]["seat"]
        card = sample["private"][drawer]["card"]
        assert card_name(card) in sample["seen"][drawer]
        for seat, text in sample["seen"].items():
            if seat != drawer:
                assert text == sample["public"] and "draws a card" in text


def test_ysp_view_06_the_final_view_shows_every_hand_and_built_this_turn_is_public() -> None:
    """YSP-VIEW-06 and the contract: at the end everything is revealed."""
    match = Match.new(GAME, 3, {}, 9)
    chooser = Rng.from_seed(9)
    built_seen = False
    while (decision := match.decision) is not None:
        game = shared_part(GAME, match.state, decision)["game"]
        assert isinstance(game, dict)
        assert game["built_this_turn"] is match.state.built_this_turn
        assert all("hand" not in p for p in game["players"])  # type: ignore[operator]
        built_seen |= bool(game["built_this_turn"])
        match.act(decision.seat, chooser.below(len(decision.choices)))
    final = shared_part(GAME, match.state)["game"]
    assert isinstance(final, dict)
    hands = [p["hand"] for p in final["players"]]  # type: ignore[index]
    assert hands == [sorted(h) for h in match.state.hands]
    assert built_seen


@pytest.mark.parametrize(
    ("kind", "data_", "text"),
    [
        ("caravan_emptied", {"goods": [0, 1]}, "the full caravan is emptied"),
        ("no_card", {"seat": 1, "reason": "action"}, "no card is left for P2 to draw"),
        ("pass", {"seat": 2}, "P3 passes"),
        ("overflow", {"seat": 0, "goods": 2}, "P1 finds no shop for 2 more goods"),
        ("keep", {"seat": 1, "shop": "br2.0", "camels": 1}, "P2 pays a camel to keep"),
        ("no_build", {"seat": 0}, "P1's group pays for nothing"),
    ],
)
def test_rare_events_are_told_too(kind: str, data_: dict[str, Any], text: str) -> None:
    """Kinds few random matches reach: their texts, from hand-made events."""
    (told,) = labels.narrate(GAME.setup(3, {}, 1), [Event(kind, data_)])
    assert str(told.data["text"]).startswith(text)
    for fact in EVENT_FACTS[kind](data_):
        assert fact in str(told.data["text"])


def test_rare_choices_are_labelled_too() -> None:
    state = GAME.setup(3, {}, 1)
    assert labels.CHOICES["pass"](state, {"kind": "pass"}).startswith("pass")
    state.actor = 0
    state.shops[data.SHOP_INDEX["br2.0"]] = 1
    label = labels.CHOICES["send"](state, {"kind": "send", "shop": "br2.0"})
    assert label == "send P2's barrel in br2.0 to the caravan first"


def test_narrate_adds_each_text_last_to_the_events_it_is_given() -> None:
    """The texts go into the events' own maps (fresh from ``apply``): the same events come
    back, each text after the other fields, the drawer's from its private part too."""
    public = {"seat": 1, "reason": "action"}
    drawn = Event("draw", public, {1: {"card": "3_gold"}})
    events = [Event("end_turn", {"seat": 0}), drawn]
    told = labels.narrate(GAME.setup(3, {}, 1), events)
    assert told is events and told[1] is drawn
    assert list(drawn.data) == ["seat", "reason", "text"]
    assert drawn.data["text"] == "P2 draws a card (a group's action)"
    assert drawn.private[1] == {
        "card": "3_gold",
        "text": f"P2 draws {card_name('3_gold')} (a group's action)",
    }
    assert told[0].data["text"] == "P1 ends their turn"


def test_labels_from_the_tables_are_those_written_afresh() -> None:
    """A take, placement or move label looked up in its tables (filled over several matches) is
    the one its facts write with the tables empty: the keys hold every fact the text reads."""
    tables: dict[str, tuple[dict[Any, Any], ...]] = {
        "take": (labels._TAKE_TEXTS,),
        "place": (labels._PLACE_TEXTS,),
        "move": (labels._MOVE_TEXTS,),
    }
    for m in range(6):
        match = Match.new(GAME, 2 + m % 3, {}, 900 + m)
        chooser = Rng.from_seed(m)
        while (decision := match.decision) is not None:
            written = GAME.describe(match.state, decision)
            for c, shown in zip(decision.choices, written, strict=True):
                kind = str(c["kind"])
                if kind in tables:
                    cached = labels.CHOICES[kind](match.state, c)
                    assert shown["label"] == cached
                    kept = [dict(table) for table in tables[kind]]
                    for table in tables[kind]:
                        table.clear()
                    assert labels.CHOICES[kind](match.state, c) == cached
                    for table, entries in zip(tables[kind], kept, strict=True):
                        table.update(entries)
            match.push(decision.seat, decision.choices[chooser.below(len(decision.choices))])
