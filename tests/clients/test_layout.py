"""The full screen fits any terminal: exact height, no line wider, board and choices visible."""

from __future__ import annotations

import re

import pytest
from rich.text import Text

from clients import render
from clients.render import ishtar
from clients.render.layout import Body, Panel, compose, stack
from clients.render.scene import Scene, decision_panel
from protocol.mirror import Mirror
from tests.clients.samples import info, samples

SIZES = [(80, 24), (100, 30), (160, 50), (60, 20)]


def screen(
    game: str, view: dict, players: int, size: tuple[int, int], **scene: object
) -> list[str]:
    seat = (view.get("own") or {}).get("seat")
    mirror = Mirror("r1", rev=3, view=view, info=info(game, players), seat=seat)
    lines = render.full(Scene(mirror, width=size[0], height=size[1], **scene))  # type: ignore[arg-type]
    return [line.plain for line in lines]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_every_sampled_decision_fits_with_its_board_and_its_choices(
    game: str, players: int, size: tuple[int, int]
) -> None:
    cols, rows = size
    for sample in samples(game, players=players):
        lines = screen(game, sample.view, players, size)
        text = "\n".join(lines)
        assert len(lines) == rows, sample.decision
        assert all(len(line) <= cols for line in lines), (sample.decision, text)
        assert lines[0].startswith(game.capitalize()) and lines[-1].startswith("> ")
        if game == "ishtar":
            assert re.search(r"^\s+a +b +c", text, re.M), text
        else:
            assert "Steward" in text and "Caravan" in text, text
        choices = (sample.view.get("own") or {}).get("choices") or []
        if choices and cols >= 80:
            # choice 1 as a list shows it ("1 take...", "  1 place...", "1: g10 h10"), not row 1;
            # a long list of spaces shows their names (test_render checks them)
            numbered = re.search(r"(?:^|  |│ )\s*1(?: [A-Za-z+]|: )", text, re.M)
            assert numbered or re.search(r"│ \d+ spaces, marked", text), text


def test_an_open_room_shows_its_seats_and_the_scores_show_at_the_end() -> None:
    first = samples("yspahan")[0]
    waiting = info("yspahan")
    waiting["state"] = "open"
    waiting["seats"][1] = {"seat": 1, "name": "", "taken": False}
    mirror = Mirror("r1", rev=0, view=first.view, info=waiting, seat=0)
    text = "\n".join(t.plain for t in render.full(Scene(mirror, width=80, height=24)))
    assert "Seats" in text and "free" in text
    assert "Take a group" not in text, "no choice before the start"
    final = next(s for s in samples("yspahan") if s.decision == "over")
    result = final.view["shared"]["result"]
    text = "\n".join(screen("yspahan", final.view, 2, (80, 24)))
    assert "Final scores" in text
    for seat, score in enumerate(result["scores"]):
        assert f": {score} points" in text, seat


def test_a_long_list_of_spaces_names_them_all_and_a_filter_pages_their_labels() -> None:
    sample = next(s for s in samples("ishtar") if s.decision == "position")
    choices = sample.view["own"]["choices"]
    total = len(choices)
    grid = ishtar.grid_of(sample.view["shared"]["game"])
    first = screen("ishtar", sample.view, 2, (80, 24))
    side = [line.split(" │ ", 1)[1] if " │ " in line else "" for line in first]
    start = side.index(f"{total} spaces, marked on the map:") + 1
    listed = " ".join(side[start : side.index("", start)]).split()
    assert listed == [grid.name(tuple(c["at"])) for c in choices], "every space, whole, in order"
    assert "page 1/" not in "\n".join(first), "names only: the list fits on one page"
    every = list(range(total))
    labels = "\n".join(screen("ishtar", sample.view, 2, (80, 24), shown=every, filter_text="put"))
    assert re.search(r"page 1/\d+", labels)
    assert re.search(r"\b1 [a-z]\d+: put the tile's first space", labels), "a filter: the labels"
    later = "\n".join(screen("ishtar", sample.view, 2, (80, 24), page=2, shown=every))
    assert "page 3/" in later
    kept = "\n".join(screen("ishtar", sample.view, 2, (80, 24), shown=[0, 1], filter_text="x"))
    assert f"2 of {total} choices match 'x'" in kept


def test_panels_get_their_least_lines_in_priority_order_then_more() -> None:
    panels = [
        Panel("a", [Text(str(i)) for i in range(10)], least=3),
        Panel("b", [Text("b1"), Text("b2")], least=3),
        Panel("c", [Text("c1")], least=2),
    ]
    # least lines first (a: title and 2, b: title and 2; no room left for c), then more to a
    assert [t.plain for t in stack(panels, 9)] == ["a", "0", "1", "2", "3", "", "b", "b1", "b2"]
    roomy = [t.plain for t in stack(panels, 20)]
    assert roomy == ["a", *map(str, range(10)), "", "b", "b1", "b2", "", "c", "c1"]


def test_compose_fills_the_height_and_crops_the_width() -> None:
    body = Body(main=[Text("x" * 200)], panels=[])
    lines = compose(Text("head"), body, Text("hint"), Text("> "), 40, 10)
    assert len(lines) == 10 and all(line.cell_len <= 40 for line in lines)
    assert lines[1].plain.endswith("…")


def test_a_short_list_wraps_long_labels_when_it_fits_and_cuts_them_when_not() -> None:
    long = "take from pile 1: a starting chevron tile (2 flowers, grass, 1 flower) paying 2 gems"
    choices = [{"kind": "pile", "pile": 0, "label": long}, {"kind": "end", "label": "end"}]
    view = {
        "shared": {"game": {}, "turn": {"seat": 0, "decision": "choose"}, "result": None},
        "own": {"seat": 0, "private": {}, "choices": choices},
    }
    mirror = Mirror("r1", rev=1, view=view, info={"game": "ishtar", "state": "playing"}, seat=0)
    panel = decision_panel(Scene(mirror), width=36)
    assert panel is not None
    roomy = [line.plain for line in panel.fit(10)]
    assert roomy[1] == "1 take from pile 1: a starting"
    assert all(len(line) <= 36 for line in roomy)
    assert "paying 2 gems" in " ".join(roomy), "nothing of the label is lost"
    assert not any(line.strip()[:1].isdigit() for line in roomy[2:-1]), "reads as a number"
    assert roomy[-1] == "2 end"
    cramped = [line.plain for line in panel.fit(3)]
    assert cramped == ["Your choice (choose)", "1 " + long, "2 end"]
