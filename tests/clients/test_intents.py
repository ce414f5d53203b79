"""What a typed line means, for every form a player types."""

from __future__ import annotations

from typing import Any

from clients.hexgrid import Grid
from clients.intents import Choose, Command, Filter, Plan, Problem, interpret
from protocol.mirror import Mirror


def mirror(game: str, choices: list[dict[str, Any]], board: dict[str, Any] | None = None) -> Mirror:
    view = {
        "shared": {"game": board or {}, "turn": {"seat": 0, "decision": "x"}, "result": None},
        "own": {"seat": 0, "private": {}, "choices": choices},
    }
    return Mirror("r1", rev=4, view=view, info={"game": game, "state": "playing"}, seat=0)


def test_numbers_choose_and_say_which_numbers_exist() -> None:
    room = mirror("yspahan", [{"kind": "end"}, {"kind": "draw"}])
    assert interpret("2", room) == Choose(1)
    assert interpret("3", room) == Problem("Choose a number from 1 to 2.")
    waiting = mirror("yspahan", [])
    found = interpret("1", waiting)
    assert isinstance(found, Problem) and found.text.startswith("Not your turn")


def test_commands_and_an_empty_line() -> None:
    room = mirror("yspahan", [{"kind": "end"}])
    assert interpret("", room) == Command("enter")
    assert interpret("h", room) == Command("help")
    assert interpret("Q", room) == Command("quit")
    assert interpret("say hello all", room) == Command("say", "hello all")
    assert interpret(">", room) == Command("next") and interpret("<", room) == Command("previous")
    assert interpret("/", room) == Command("clear")
    assert interpret("p", room) == Command("again") == interpret("rematch", room)


def test_a_typo_suggests_the_nearest_command() -> None:
    found = interpret("strat", mirror("yspahan", [{"kind": "end"}]))
    assert isinstance(found, Problem) and "Did you mean 'start'?" in found.text


def test_words_filter_the_choices_by_their_text() -> None:
    room = mirror(
        "yspahan", [{"kind": "end"}, {"kind": "draw"}, {"kind": "build", "building": "pen"}]
    )
    assert interpret("/draw", room) == Filter((1,), "draw")
    assert interpret("build", room) == Filter((2,), "build")
    assert interpret("/nothing", room) == Problem("No choice mentions 'nothing'.")


def test_an_ishtar_space_chooses_the_choice_on_it() -> None:
    grid = Grid.of([(0, 0), (1, 0), (0, 1)], {(0, 0): "a1", (1, 0): "b1", (0, 1): "a2"})
    choices = [{"kind": "assistant", "at": [1, 0]}, {"kind": "pass"}]
    room = mirror("ishtar", choices)
    assert interpret("b1", room, grid) == Choose(0)
    assert interpret("1,0", room, grid) == Choose(0)
    nothing = interpret("a1", room, grid)
    assert isinstance(nothing, Problem) and "None of your choices is on a1" in nothing.text
    off = interpret("q9", room, grid)
    assert isinstance(off, Problem) and "no space q9" in off.text


def test_several_choices_on_one_space_are_shown_to_pick_from() -> None:
    grid = Grid.of([(0, 0), (1, 0)], {(0, 0): "a1", (1, 0): "b1"})
    choices = [
        {"kind": "bloom", "token": "t1", "cells": [[0, 0], [1, 0]]},
        {"kind": "bloom", "token": "t2", "cells": [[0, 0]]},
        {"kind": "bloom", "token": "t3", "cells": [[1, 0]]},
    ]
    assert interpret("a1", mirror("ishtar", choices), grid) == Filter((0, 1), "a1")


def test_yspahan_shops_souks_and_squares() -> None:
    board = {"city": {"br3": [None, None, 1]}, "pending": {"goods": 2}}
    choices = [{"kind": "place", "shop": "br3.0"}, {"kind": "place", "shop": "br3.1"}]
    room = mirror("yspahan", choices, board)
    assert interpret("br3.1", room) == Plan(({"kind": "place", "shop": "br3.1"},))
    assert interpret("br3.1 br3.0", room) == Plan(
        ({"kind": "place", "shop": "br3.1"}, {"kind": "place", "shop": "br3.0"})
    )
    assert interpret("br3", room) == Plan(({"kind": "place", "shop": "br3.0"},), fill="br3")
    assert isinstance(interpret("sk4", room), Problem)
    short = mirror("yspahan", choices, {**board, "pending": {"goods": 1}})
    found = interpret("br3", short)
    assert isinstance(found, Problem) and "which shops matters" in found.text
    steward = mirror("yspahan", [{"kind": "move", "to": "W9", "gold": 1}])
    assert interpret("w9", steward) == Choose(0)
    assert isinstance(interpret("E7", steward), Problem)


def test_before_the_start_no_choice_can_be_taken() -> None:
    room = mirror("yspahan", [{"kind": "end"}])
    room.info["state"] = "open"
    found = interpret("1", room)
    assert isinstance(found, Problem) and "not started" in found.text


def test_every_shop_and_square_of_the_data_is_typed_as_the_server_names_it() -> None:
    """One numbering (shops from 0, ``sk5.0``..``sk5.4``): what the server's data and texts
    name is what a player types."""
    from server.gamedata import document

    data = document("yspahan").value
    assert isinstance(data, dict)
    shops = [str(s["shop"]) for s in data["shops"]]
    assert "sk5.0" in shops and "sk5.4" in shops and "sk5.5" not in shops
    for shop in shops:
        choice = {"kind": "place", "shop": shop, "label": f"put a good in shop {shop}"}
        souk = shop.split(".")[0]
        room = mirror("yspahan", [choice], {"city": {souk: [None]}, "pending": {"goods": 1}})
        assert interpret(shop, room) == Plan(({"kind": "place", "shop": shop},)), shop
    for entry in data["steward"]["squares"]:
        square = str(entry["square"])
        choice = {"kind": "move", "to": square, "gold": 0, "label": f"move to {square}"}
        assert interpret(square, mirror("yspahan", [choice])) == Choose(0), square


def test_u_is_the_undo_command() -> None:
    room = mirror("yspahan", [{"kind": "end"}])
    assert interpret("u", room) == Command("undo")
    assert interpret("undo", room) == Command("undo")


def test_a_plan_takes_its_steps_in_order_then_fills_its_souk_while_offered() -> None:
    choices = [
        {"kind": "place", "shop": "br3.2"},
        {"kind": "place", "shop": "sk3.0"},
        {"kind": "place", "shop": "br3.1"},
    ]
    plan = Plan(({"kind": "place", "shop": "br3.1"},), fill="br3")
    assert plan.step(choices) == (2, Plan((), "br3")), "the step named, not the souk's first"
    assert Plan((), "br3").step(choices) == (0, Plan((), "br3"))
    assert Plan(({"kind": "place", "shop": "sk3.0"},)).step(choices) == (1, None)
    assert Plan((), "ch2").step(choices) is None, "not offered: the plan ends"
