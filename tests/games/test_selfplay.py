"""`oasis selfplay`: one JSON line per match, a summary line, same seed same output."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from games import registry
from games.selfplay import main, play, run
from oasis.cli import build_parser
from tests.games.tiny import TINY


def _lines(argv: list[str]) -> list[dict[str, object]]:
    registry.register(TINY)
    out = io.StringIO()
    assert run(build_parser().parse_args(["selfplay", *argv]), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_selfplay_prints_a_line_per_game_and_a_summary() -> None:
    lines = _lines(["--game", "tiny", "--players", "3", "--games", "4", "--seed", "10"])
    assert len(lines) == 5
    for i, line in enumerate(lines[:4]):
        assert line["seed"] == 10 + i
        assert line["players"] == 3
        keys = {"game", "seed", "players", "turns", "decisions", "scores", "winners", "ms"}
        assert set(line) == keys
        assert isinstance(line["scores"], list)
        assert sum(line["scores"]) == 42  # every card of the tiny deck is played
    assert lines[4]["summary"] is True
    assert lines[4]["games"] == 4


def test_selfplay_same_seed_same_output_but_time() -> None:
    def strip(lines: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in line.items() if k not in {"ms", "seconds", "games_per_second"}}
                for line in lines]  # fmt: skip

    argv = ["--game", "tiny", "--players", "2", "--games", "3", "--seed", "5"]
    assert strip(_lines(argv)) == strip(_lines(argv))
    assert play(TINY, 2, 5)["scores"] == _lines(argv)[0]["scores"]


def test_selfplay_rejects_unknown_games_and_bad_counts(capsys: object) -> None:
    assert main(["--game", "chess"]) == 2
    registry.register(TINY)
    assert main(["--game", "tiny", "--players", "9"]) == 2
    assert main(["--game", "tiny", "--games", "0"]) == 2


def test_oasis_console_entry_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "oasis", "--help"], capture_output=True, text=True, check=True
    )
    assert "selfplay" in done.stdout
