"""``oasis``: one entry point, a subcommand per tool (see ``oasis --help``)."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from typing import Any


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oasis", description="Oasis game server: client and tools."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from games import selfplay

    selfplay_parser = commands.add_parser(
        "selfplay",
        help="play random matches in-process and print one JSON line each",
        description=selfplay.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    selfplay.add_arguments(selfplay_parser)
    selfplay_parser.set_defaults(run=selfplay.run)

    from server import replay

    replay_parser = commands.add_parser(
        "replay",
        help="re-execute a finished match from its archive; print its events and scores",
        description=replay.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_arguments(replay_parser)
    replay_parser.set_defaults(run=replay.run)
    _client_commands(commands)
    return parser


DEFAULT_SERVER = "ws://127.0.0.1:8765"


def _client(module: str, command: str) -> Callable[[argparse.Namespace], int]:
    """A ``run`` that imports ``clients.<module>`` only when the command runs."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        from clients.lobby import run as run_async

        target = getattr(importlib.import_module(f"clients.{module}"), command)
        return run_async(lambda: target(args), prog=f"oasis {args.command}")

    return run


def _client_commands(commands: Any) -> None:
    """The client: lobby, play, watch, bots. Every one talks to ``--server`` over the protocol."""

    def add(name: str, helptext: str, module: str, command: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(
            name, help=helptext, description=helptext
        )
        sub.add_argument(
            "--server", default=DEFAULT_SERVER, help=f"server URL (default {DEFAULT_SERVER})"
        )
        sub.set_defaults(run=_client(module, command))
        return sub

    def room_settings(sub: argparse.ArgumentParser, *, game_required: bool = True) -> None:
        sub.add_argument("--game", required=game_required, help="ishtar or yspahan")
        sub.add_argument("--players", type=int, default=2, help="seats (default 2)")
        sub.add_argument("--private", action="store_true", help="not listed by `oasis rooms`")
        sub.add_argument("--delay", type=float, default=0.0, help="spectator delay in seconds")
        sub.add_argument("--options", help="game options as a JSON map")
        sub.add_argument("--seed", type=int, help="fix the seed (servers with allow_seed only)")
        sub.add_argument(
            "--bot",
            choices=("heuristic", "random"),
            default="heuristic",
            help="the kind of the server bots that fill free seats (default heuristic)",
        )
        sub.add_argument(
            "--clock",
            metavar="SECONDS[+INCREMENT]",
            help="a clock per seat: initial time plus an increment per decision, e.g. 300+5",
        )
        sub.add_argument(
            "--on-timeout",
            choices=("bot", "forfeit"),
            default="bot",
            help="at zero a bot decides for the seat (default), or the seat is forfeited",
        )

    def name(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--name", default="player", help="your name at the table")
        screen(sub)
        sub.add_argument(
            "--no-auto",
            action="store_true",
            help="never send a lone legal choice by itself (by default it is, after a moment)",
        )
        sub.add_argument(
            "--auto-delay",
            type=float,
            default=1.0,
            metavar="SECONDS",
            help="how long a lone choice is shown before it is sent (default 1)",
        )

    def screen(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--plain",
            action="store_true",
            help="print lines instead of the full screen (scripts, screen readers); the default"
            " when input or output is not a terminal",
        )

    rooms = add("rooms", "list the public rooms", "lobby", "rooms")
    rooms.add_argument("--game", help="only rooms of this game")
    rooms.add_argument("--all", action="store_true", help="finished rooms too")
    rooms.add_argument("--after", help="the next page: the cursor the previous page printed")

    create = add("create", "create a room, take seat 1 and play as its host", "lobby", "create")
    room_settings(create)
    name(create)
    create.add_argument("--bots", action="store_true", help="start now, bots in free seats")
    create.add_argument("--detach", action="store_true", help="only create; print the room id")

    join = add(
        "join", "take a seat in a room (or resume one with --token) and play", "lobby", "join"
    )
    join.add_argument("room", help="the room id")
    join.add_argument("--seat", type=int, help="the seat to take, from 1 (default: first free)")
    join.add_argument("--token", help="your seat token, to resume a seat you held")
    name(join)

    quick = add("quick", "join a quick match (it starts when full) and play", "lobby", "quick")
    quick.add_argument("--game", required=True, help="ishtar or yspahan")
    quick.add_argument("--players", type=int, default=2, help="seats (default 2)")
    name(quick)

    play = add(
        "play", "play a match now against server bots (or --room to join one)", "lobby", "play"
    )
    room_settings(play, game_required=False)
    play.add_argument("--room", help="join this room instead of creating one")
    name(play)

    watch = add("watch", "follow a match as a spectator until its final scores", "watch", "watch")
    watch.add_argument("room", help="the room id")
    watch.add_argument(
        "--every",
        type=float,
        default=2.0,
        help="with --plain: print the board at most every N s (default 2)",
    )
    screen(watch)

    bots = add("bots", "run matches of client-side random bots (load and soak)", "bots", "bots")
    bots.add_argument("--rooms", type=int, default=10, help="matches to play (default 10)")
    bots.add_argument("--game", required=True, help="ishtar or yspahan")
    bots.add_argument("--players", type=int, default=2, help="seats per match (default 2)")
    bots.add_argument("--parallel", type=int, help="matches at once (default all)")
    bots.add_argument("--connections", type=int, help="sockets shared by the bots (default <= 30)")
    bots.add_argument("--seed", type=int, help="seed of the bots (and rooms, with allow_seed)")
    bots.add_argument("--every", type=float, default=5.0, help="progress line period (s)")


def suggest(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """For ``oasis jion``: a sentence naming the nearest command; None for a known one."""
    commands: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands = list(action.choices)
    word = next((a for a in argv if not a.startswith("-")), None)
    if word is None or word in commands:
        return None
    near = difflib.get_close_matches(word, commands, n=1, cutoff=0.5)
    known = ", ".join(commands)
    if near:
        return f"oasis: unknown command {word!r}; did you mean {near[0]!r}? (commands: {known})"
    return f"oasis: unknown command {word!r} (commands: {known})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    if given and not given[0].startswith("-"):
        problem = suggest(parser, given[:1])
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
    args = parser.parse_args(given)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
