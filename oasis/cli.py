"""``oasis``: one entry point, a subcommand per tool (see ``oasis --help``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
