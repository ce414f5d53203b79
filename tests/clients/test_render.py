"""The renderers on real view documents: everything a player needs is on the screen."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from clients import render
from clients.render import common, ishtar, yspahan
from clients.render.common import to_text
from clients.render.scene import Scene
from protocol.mirror import Mirror
from server.gamedata import document
from tests.clients.samples import events, info, samples


def static(game: str) -> dict[str, Any]:
    """What ``GET /games/<game>`` answers, as the client reads it."""
    value = document(game).value
    assert isinstance(value, dict)
    return value


def screen_text(game: str, view: dict[str, Any], width: int = 140) -> str:
    mirror = Mirror("r1", rev=3, view=view, info=info(game))
    return to_text(render.screen(mirror), width)


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_every_sampled_view_draws_with_the_game_drawing_and_numbered_choices(
    game: str, players: int
) -> None:
    landmark = {"ishtar": "Tree row", "yspahan": "Caravan ("}[game]
    for sample in samples(game, players=players):
        mirror = Mirror("r1", rev=3, view=sample.view, info=info(game, players))
        text = to_text(render.screen(mirror), 140)
        assert f"P{players} bot {players}" in text
        assert landmark in text, sample.decision
        assert "Room r1" in text
        choices = (sample.view["own"] or {}).get("choices") or []
        if choices:
            turn = sample.view["shared"]["turn"] or {}
            title = common.printable(turn["prompt"]) if turn.get("prompt") else "Your choices"
            head = " ".join(title.split()[:2])  # (a long title wraps in the narrow table)
            assert head in text, (title, sample.decision)  # the server's prompt heads them
            assert re.search(rf"^\s*{len(choices)} │", text, re.M), sample.decision


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_the_final_screen_shows_the_scores_with_their_breakdown(game: str) -> None:
    final = next(s for s in samples(game) if s.decision == "over")
    result = final.view["shared"]["result"]
    text = screen_text(game, final.view)
    assert "Final scores" in text and "match over" in text
    for category in result["breakdown"][0]:
        assert category in text
    line = common.result_line(result, info(game))
    assert line.startswith("Final scores: P1 ann ")
    assert [int(n) for n in re.findall(r" (\d+)(?:,| ·)", line)] == result["scores"]


def test_the_ishtar_map_puts_everything_on_its_space() -> None:
    game = {
        "terrain": [
            {"r": 0, "q": 0, "cells": ".pTF", "names": ["b1", "c1", "d1", "e1"]},
            {"r": 1, "q": -1, "cells": ". ..", "names": ["a2", None, "b2", "c2"]},
        ],
        "fountains": [{"at": [3, 0], "colour": "red"}],
        "rock_gems": {"1,0": "purple"},
        "laid": [
            {"tile": "t", "at": [-1, 1], "spaces": [[-1, 1, 2, None], [1, 1, 0, None]]},
            {"assistant": 0, "at": [-1, 1]},
            {"tree": 1, "at": [1, 1]},
        ],
        "players": [{"colour": "yellow"}, {"colour": "blue"}],
        "pending": {},
    }
    roomy = ishtar.hex_map(game).plain.splitlines()
    assert roomy[0] == "    a   b   c   d   e"
    assert roomy[1] == "1      ·  <p> [T]  Fr  1"
    assert roomy[2] == "2   2@1      Y2  ·     2"
    assert roomy[3] == roomy[0]
    compact = ishtar.hex_map(game, roomy=False).plain.splitlines()
    assert compact[0] == "   a b c d e"
    assert compact[1] == "1   · P T F  1"
    assert compact[2] == "2  @¹  Y²·   2"


def test_the_ishtar_map_names_the_spaces_a_choice_offers() -> None:
    sample = next(s for s in samples("ishtar") if s.decision == "position")
    choices = sample.view["own"]["choices"]
    game = sample.view["shared"]["game"]
    grid = ishtar.grid_of(game)
    names = {grid.name((c["at"][0], c["at"][1])) for c in choices}
    drawn = ishtar.hex_map(game, choices).plain
    assert names == set(re.findall(r"[a-z]\d+", drawn)), "every offered space, and only those"
    compact = ishtar.hex_map(game, choices, roomy=False).plain.splitlines()
    for name in names:
        column, row = name[0], int(name[1:])
        assert column in compact[row][3:-3], name


@pytest.mark.parametrize("decision", ["over", "over-seat"])
def test_the_final_ishtar_map_shows_every_tree_and_assistant(decision: str) -> None:
    for sample in (s for s in samples("ishtar") if s.decision == decision):
        game = sample.view["shared"]["game"]
        drawn = ishtar.hex_map(game).plain
        trees = sum("tree" in item for item in game["laid"])
        assistants = sum("assistant" in item for item in game["laid"])
        assert len(re.findall(r" Y\d", drawn)) == trees + 1  # + the legend
        assert len(re.findall(r"\d@\d", drawn)) == assistants + 1


def test_the_ishtar_screen_shows_piles_can_tree_row_players_and_own_trees() -> None:
    sample = next(s for s in samples("ishtar") if s.decision == "over-seat")
    game = sample.view["shared"]["game"]
    text = screen_text("ishtar", sample.view)
    for card in game["display"]:
        assert card["name"] in text
    assert len(re.findall(r"^ \d +│ (straight|chevron|triangle) ", text, re.M)) == len(
        game["piles"]
    )
    assert "Your planted tree cards:" in text
    assert f"{sample.view['own']['private']['planted_points']} points" in text
    for seat in ("P1 ann", "P2 bot 2"):
        assert seat in text


def test_the_yspahan_city_shows_every_good_and_the_steward() -> None:
    for sample in samples("yspahan"):
        game = sample.view["shared"]["game"]
        text = to_text(yspahan.board(sample.view, info("yspahan"), [], static("yspahan")), 140)
        for souk, shops in game["city"].items():
            drawn = re.search(rf"{souk}\(\d+\) \[([^\]]*)\]", text)
            assert drawn, souk
            want = " ".join("." if s is None else str(s + 1) for s in shops)
            assert drawn[1] == want, souk
        assert f"[{game['steward']}]" in text
        assert "W10" in text and "S7" in text, "the whole path, from the data"
        assert f"Caravan ({len(game['caravan']['goods'])}/" in text


def test_without_the_static_data_the_yspahan_board_is_drawn_from_the_view_alone() -> None:
    sample = next(s for s in samples("yspahan") if s.decision == "turn")
    game = sample.view["shared"]["game"]
    text = to_text(yspahan.board(sample.view, info("yspahan"), []), 140)
    for souk in game["city"]:
        assert re.search(rf"{souk} \[", text), souk  # no points without the data
    assert f"[{game['steward']}]" in text and "W10" not in text
    lines = yspahan.path_lines(str(game["steward"]), {"W9", "E2"})
    assert len(lines) == 1 and "›E2" in lines[0].plain and "›W9" in lines[0].plain


def test_cards_in_hand_show_their_name_and_effect_from_the_data() -> None:
    data = static("yspahan")
    entry = data["cards"][0]
    assert yspahan.card_text(data, entry["card"]) == f"{entry['name']} ({entry['text']})"
    assert yspahan.card_text(None, entry["card"]) == entry["card"]


def test_the_yspahan_screen_shows_the_own_hand() -> None:
    for sample in samples("yspahan"):
        hand = (sample.view["own"] or {}).get("private", {}).get("hand")
        if hand:
            text = screen_text("yspahan", sample.view)
            assert all(card in text for card in hand)
            return
    pytest.skip("no sampled view had a card in hand")


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_every_event_of_a_match_reads_as_a_sentence(game: str) -> None:
    for event in events(game, 1):
        line = render.event_line(game, event, info(game))
        assert line and not line.startswith(event["kind"]), event


def test_an_unknown_game_or_an_unexpected_view_falls_back_to_the_data() -> None:
    view = {"shared": {"game": {"stones": [1, 2]}, "turn": None, "result": None}, "own": None}
    assert "stones" in to_text(render.board("go", view, {}))
    broken = {"shared": {"game": {"terrain": "nonsense"}, "turn": None, "result": None}}
    assert "nonsense" in to_text(render.board("ishtar", broken, {}))


def test_generic_events_name_the_player() -> None:
    line = render.event_line("go", {"kind": "stone", "seat": 1, "at": [3, 4]}, info("go"))
    assert line == "P2 bot 2: stone at=(3,4)"


def test_each_rotation_is_drawn_over_the_terrain_with_its_number_and_spaces() -> None:
    sample = next(s for s in samples("ishtar") if s.decision == "rotation")
    game = sample.view["shared"]["game"]
    choices = sample.view["own"]["choices"]
    grid = ishtar.grid_of(game)
    mirror = Mirror("r1", rev=3, view=sample.view, info=info("ishtar"))
    text = "\n".join(line.plain for line in render.full(Scene(mirror, width=80, height=24)))
    for number, choice in enumerate(choices, 1):
        spaces = " ".join(grid.name((q, r)) for q, r in choice["cells"])
        assert f"{number}: {spaces}" in text
    tile = game["pending"]["tile"]["spaces"]
    flowers = [str(s["flowers"]) if s["flowers"] else "," for s in tile]
    assert text.count(f"({flowers[0]})") >= len(choices), "the tile drawn in each footprint"


def test_parts_a_newer_server_adds_to_the_view_are_shown_as_data() -> None:
    sample = samples("yspahan")[0]
    view = {**sample.view, "seats": ["a"]}
    view["shared"] = {**sample.view["shared"], "clocks": [{"seat": 0, "left": 61.5}]}
    text = screen_text("yspahan", view)
    assert "clocks" in text and "61.5" in text and "seats" in text
    assert "More" not in screen_text("yspahan", sample.view)


def _full_text(game: str, view: dict[str, Any], width: int = 160, height: int = 50) -> str:
    mirror = Mirror("r1", rev=3, view=view, info=info(game), seat=0)
    scene = Scene(mirror, width=width, height=height, data=static(game))
    return "\n".join(line.plain for line in render.full(scene))


def test_what_the_server_explains_of_ishtar_is_on_the_screen() -> None:
    """Fountain leaders, flowerbed controllers and provisional scores (SPEC 1.1 views)."""
    sample = next(s for s in samples("ishtar") if s.decision == "plant")
    view = copy.deepcopy(sample.view)
    game = view["shared"]["game"]
    tile = next(item for item in game["laid"] if "tile" in item)
    flower = next(sp for sp in tile["spaces"] if sp[2])
    game["beds"] = [{"cells": [flower[:2]], "flowers": flower[2], "owner": 1,
                     "fountain": game["fountains"][0]["at"]}]  # fmt: skip
    for fountain in game["fountains"]:
        fountain.update(points=4, spaces=[0, 0], leaders=[])
    game["fountains"][0].update(spaces=[1, 3], leaders=[1])
    game["provisional"] = [{"flowers": 2, "fountains": 0, "total": 2},
                           {"flowers": 5, "fountains": 4, "total": 9}]  # fmt: skip
    view["shared"]["turn"]["prompt"] = "buy a tree card, or end your turn"
    view["own"]["private"]["planted_points"] = 3
    for size in ((160, 50), (80, 24)):
        text = _full_text("ishtar", view, *size)
        assert f"{flower[2]}²" in text, "the bed shows its controller"
        assert re.search(r"[a-z]+\d+ \w+ 4pts: P2 leads \(P1:1 P2:3\)", text), size
        assert "P2 bot 2 9+? pts" in text, "the others' face-down trees are unknown"
        assert "P1 ann (you) 2+3 pts" in text, "one's own planted trees count for oneself"
        assert "Buy a tree card, or end your turn" in text, "the server's prompt, capitalised"


def test_yspahan_steward_moves_and_goods_say_what_they_do_from_their_effects() -> None:
    sample = next(s for s in samples("yspahan") if s.decision == "turn")
    view = copy.deepcopy(sample.view)
    view["shared"]["turn"]["decision"] = "steward"
    view["own"]["choices"] = [
        {"kind": "move", "to": "W7", "gold": 1, "label": "move the steward 3 squares to W7",
         "effects": {"sends": [{"shop": "sk5.0", "seat": 0}, {"shop": "ch3.1", "seat": 1}]}},
        {"kind": "move", "to": "E2", "gold": 0, "label": "move the steward 2 squares to E2",
         "effects": {"sends": []}},
    ]  # fmt: skip
    text = _full_text("yspahan", view, 80, 24)
    assert "1 W7 (pay 1 gold): sends your sk5.0, P2's ch3.1" in text
    assert "2 E2: sends nothing" in text
    assert "›W7" in text and "›E2" in text, "the reachable squares on the path"
    view["shared"]["turn"]["decision"] = "place"
    view["own"]["choices"] = [
        {"kind": "place", "shop": "br4.0", "label": "put a barrel in shop br4.0",
         "effects": {"souk": "br4", "filled": 4, "shops": 4}},
    ]  # fmt: skip
    text = _full_text("yspahan", view, 80, 24)
    assert "1 br4.0: souk br4 4 of 4 filled complete! (6 pts)" in text
    assert "br4(6)[+ " in text, "the shop offered is marked in the city"


def test_the_goods_a_steward_move_would_send_away_stand_out_in_the_city() -> None:
    game = {"city": {"sk3": [1, None, 0]}}
    lines = yspahan.city_lines(game, set(), static("yspahan"), frozenset({"sk3.0"}))
    line = lines[0]
    assert "sk3(3)[2 . 1]" in line.plain
    styles = {line.plain[span.start : span.end]: str(span.style) for span in line.spans}
    assert "reverse" in styles["2"] and "reverse" not in styles["1"]


def test_cards_and_buildings_on_the_board_are_named_as_the_data_names_them() -> None:
    data = static("yspahan")
    card = next(c for c in data["cards"] if c["card"] == "swap_camels_gold")
    stall = next(b for b in data["buildings"] if b["building"] == "stall")
    sample = next(s for s in samples("yspahan") if s.decision == "turn")
    view = copy.deepcopy(sample.view)
    game = view["shared"]["game"]
    game["pending"] = {**(game.get("pending") or {}), "card": "swap_camels_gold"}
    game["players"][0]["buildings"] = ["stall"]
    text = _full_text("yspahan", view, 160, 50)
    assert f"card in play: {card['name']}" in text and "swap_camels_gold" not in text
    assert f"built {stall['name']}" in text
    plain = to_text(yspahan.board(view, info("yspahan"), [], data), 160)
    assert f"Card in play: {card['name']}" in plain and stall["name"] in plain


def test_one_s_planted_trees_are_named_as_the_data_names_them() -> None:
    data = static("ishtar")
    tree = data["trees"][0]
    sample = next(s for s in samples("ishtar") if s.decision == "plant")
    view = copy.deepcopy(sample.view)
    view["own"]["private"]["planted"] = [{"card": tree["card"], "points": tree["points"]}]
    view["own"]["private"]["planted_points"] = tree["points"]
    text = _full_text("ishtar", view, 160, 50)
    assert f"Your tree cards: {tree['name']} {tree['points']}" in text
    assert tree["card"] not in text
    plain = to_text(ishtar.board(view, info("ishtar"), [], data), 160)
    assert f"{tree['name']} ({tree['points']} pts)" in plain


def _side(text: str) -> list[str]:
    """The side column of a full screen (right of the map)."""
    return [line.split(" │ ", 1)[1] for line in text.splitlines() if " │ " in line]


def test_pile_choices_beside_the_piles_keep_their_cost_whole_at_80x24() -> None:
    """The piles panel shows each pile's top tile; the choice says what differs, the cost."""
    sample = next(s for s in samples("ishtar") if s.decision == "choose")
    view = copy.deepcopy(sample.view)
    choices = view["own"]["choices"]
    costly = "take from pile 2: a triangle tile (1 flower, 2 flowers, grass), paying 2 gems to"
    choices[1]["label"] = costly + " move the watering can there"
    side = " ".join(part.strip() for part in _side(_full_text("ishtar", view, 80, 24)))
    assert "2 take from pile 2, paying 2 gems to move the watering can there" in side
    for number, choice in enumerate(choices, 1):
        if number != 2:
            rest = choice["label"].split(")", 1)[1]  # after the tile: what the can does
            assert f"{number} take from pile {number}{rest}" in side, side
    assert "Piles" in side


def test_the_rotation_title_is_whole_and_the_tile_has_its_own_line_at_80x24() -> None:
    sample = next(s for s in samples("ishtar") if s.decision == "rotation")
    side = _side(_full_text("ishtar", sample.view, 80, 24))
    assert re.fullmatch(r"Choose how the tile turns at [a-z]\d+ *", side[0]), side[0]
    tile = ishtar.tile_short(sample.view["shared"]["game"]["pending"]["tile"])
    assert side[1].strip() == f"The tile: {tile}"
    wide = _side(_full_text("ishtar", sample.view, 160, 50))
    assert wide[0].strip().endswith(f": {tile}"), "where it fits, the tile is in the title"
