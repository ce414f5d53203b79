"""Digests of everything the engines put out, to prove that a speed-up changed no byte.

Plays seeded random matches of Ishtar and Yspahan (2 to 4 seats) through a :class:`Match` and
the server's :class:`server.views.Views`, taking back a step now and then where undo is
allowed, and hashes, at every revision: the pending decision (seat, kind and the bare legal
choices), every audience's view document (``Views.full``: shared part, each seat's own part with
its described choices and ``undo`` flag), every frame of the revision (each seat's and the
spectators': ops, events with their texts, view hashes), each seat's ``why_no_undo``, the
snapshot (``dump``) and the result. It also checks on the way that the views of the live state
(with whatever the engine keeps between calls) equal those of a state rebuilt from its snapshot
(nothing kept), that ``load(dump(s))`` dumps the same bytes, and ``Match.resolve`` of every
listed choice and of each choice's index.

One digest per match; ``--write FILE`` saves them (JSON), ``--check FILE`` compares and names
the first match that differs. ``--tree DIR`` imports another checkout's code (the base), so
that the same script makes the digests of both::

    .venv/bin/python bench/outputs.py --tree ../base --write /tmp/outputs-base.json
    .venv/bin/python bench/outputs.py --check /tmp/outputs-base.json

``--decoded`` (on both sides) compares what the frames decode to instead of their bytes: for a
change that only orders keys otherwise inside a frame (a seat's choices, spliced from their
canonical bytes since 2026-12-06). ``--unordered`` (on both sides) also takes each frame's
ops in the order of their canonical bytes: for a change that only sends the ops of one map's
keys in another order (tracked maps in canonical key order, 2026-12-06); the frames' view
hashes and every audience's view document are still compared as they are.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def digest_match(
    name: str, players: int, seed: int, decoded: bool = False, unordered: bool = False
) -> tuple[str, int, int]:
    """The digest of one seeded match, its number of revisions and of undos among them.

    ``decoded``: the frames count by what they decode to (their canonical encoding), not by
    their bytes, so that a change of the order of keys inside a frame alone changes nothing;
    ``unordered``: that, with each frame's ops in the order of their canonical bytes."""
    from games import registry
    from games.base import Match, audience_view
    from games.rng import Rng
    from protocol.codec import canonical, unpack
    from server.views import Views

    game = registry.get(name)
    match = Match.new(game, players, {}, seed)
    views = Views(f"room-{seed}", match, players)
    chooser = Rng.from_seed(seed ^ 0x0DD5)
    h = hashlib.blake2b(digest_size=16)

    def feed(tag: str, value: Any) -> None:
        h.update(tag.encode() + b"\0" + canonical(value) + b"\1")

    def feed_views() -> None:
        for seat in [None, *range(players)]:
            doc, digest = views.full(seat)
            feed("full", doc)
            feed("hash", digest)
        for seat in range(players):
            feed("why_no_undo", match.why_no_undo(seat))
        snap = game.dump(match.state)
        feed("dump", snap)
        fresh = game.load(snap)
        if canonical(game.dump(fresh)) != canonical(snap):
            raise AssertionError(f"{name} {players} {seed}: load(dump(s)) dumps other bytes")
        for seat in [None, *range(players)]:
            live = match.view(seat).to_json()
            again = audience_view(game, fresh, seat).to_json()
            if canonical(live) != canonical(again):
                raise AssertionError(f"{name} {players} {seed} seat {seat}: the live view differs")
        feed("result", None if match.result() is None else match.result().to_json())  # type: ignore[union-attr]

    feed_views()
    rev = undos = 0
    while (decision := match.decision) is not None:
        feed("decision", [decision.seat, decision.kind, list(decision.choices)])
        for i, legal in enumerate(decision.choices):
            if match.resolve(decision.seat, legal) is not legal:
                raise AssertionError(f"{name} {players} {seed}: choice {i} resolves to another")
            if match.resolve(decision.seat, i) is not legal:
                raise AssertionError(f"{name} {players} {seed}: index {i} resolves to another")
        seat = decision.seat
        if match.can_undo(seat) and chooser.below(4) == 0:
            events = match.undo(seat)
            undos += 1
        else:
            legal = decision.choices[chooser.below(len(decision.choices))]
            events = match.push(seat, legal)
        rev += 1
        revision = views.advance(rev, events)
        for frame in (*revision.seat_frames, revision.spectator_frame):
            if unordered:
                body = unpack(frame)
                body["ops"] = sorted(body["ops"], key=canonical)
                h.update(canonical(body))
            else:
                h.update(canonical(unpack(frame)) if decoded else frame)
        feed("spectator_hash", revision.spectator_hash)
        feed_views()
    return h.hexdigest(), rev, undos


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tree", type=Path, default=HERE, help="the checkout whose code runs")
    parser.add_argument("--games", default="ishtar,yspahan", help="and tiny, the tests' card game")
    parser.add_argument("--seeds", type=int, default=8, help="matches per game and player count")
    parser.add_argument(
        "--decoded",
        action="store_true",
        help="compare the frames decoded (their canonical bytes): key order inside them aside",
    )
    parser.add_argument(
        "--unordered",
        action="store_true",
        help="as --decoded, each frame's ops in the order of their canonical bytes",
    )
    parser.add_argument("--write", type=Path)
    parser.add_argument("--check", type=Path)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.tree.resolve()))
    if "tiny" in args.games.split(","):  # (the tests' tiny card game, the peer comparison's)
        from games import registry
        from tests.games.tiny import TINY

        registry.register(TINY)
    found: dict[str, str] = {}
    for name in args.games.split(","):
        start, revisions, undone = time.process_time(), 0, 0
        for players in (2, 3, 4):
            for seed in range(1, args.seeds + 1):
                digest, revs, undos = digest_match(
                    name, players, seed, args.decoded, args.unordered
                )
                found[f"{name}/{players}/{seed}"] = digest
                revisions, undone = revisions + revs, undone + undos
        print(
            f"{name}: {revisions} revisions ({undone} undos) "
            f"in {time.process_time() - start:.1f} s CPU"
        )
    if args.write:
        args.write.write_text(json.dumps(found, indent=1) + "\n")
        print(f"wrote {len(found)} digests to {args.write}")
    if args.check:
        saved = json.loads(args.check.read_text())
        differ = [key for key in found if saved.get(key) != found[key]]
        missing = [key for key in found if key not in saved]
        if differ:
            print(f"DIFFER: {len(differ)} of {len(found)} matches, first {differ[0]}")
            if missing:
                print(f"({len(missing)} not in {args.check})")
            return 1
        print(f"identical: {len(found)} matches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
