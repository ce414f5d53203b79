"""``bench/perfstacks.py``: ``perf script``'s samples read into stacks, parts and shares."""

from __future__ import annotations

import pytest

from bench.perfstacks import OTHER, PARTS, parse, part_of, readable

LIB = "/usr/lib/libpython3.11.so.1.0"
SERVER = "/tree/server/native__mypyc.cpython-311-x86_64-linux-gnu.so"
GAMES = "/tree/games/native__mypyc.cpython-311-x86_64-linux-gnu.so"
RUN = "CPyDef_server___effector___execute_Effector_gen_____mypyc_generator_helper__"

# Four samples of a compiled server, leaf first, as `perf script` prints them (trimmed stacks):
# a socket write in the fan-out, a game's view inside Views.advance, the diff inside it, and the
# event loop alone.
SCRIPT = f"""\
python 18519  1363.858085:    1001001 cpu-clock:ppp:
\tffffffffa1e0c2a1 _raw_spin_unlock_irqrestore+0x21 ([kernel.kallsyms])
\tffffffffa1b3c8f0 ksys_write+0x70 ([kernel.kallsyms])
\t          1a2b3c __GI___libc_write+0x4c (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t           c1828 CPyDef_server___connection___Connection___send_framed+0x9e8 ({SERVER})
\t           c1900 CPyDef_server___fanout___Fanout___send+0x44 ({SERVER})
\t           8c504 {RUN}+0x1c4 ({SERVER})

python 18519  1363.859086:    1001001 cpu-clock:ppp:
\t           14144 CPyDef_games___yspahan___views___shared_view+0x94 ({GAMES})
\t           14200 CPyDef_games___yspahan___game___Yspahan___shared_view__Game_glue+0x5e ({GAMES})
\t           14300 CPyDef_games___base___shared_part+0x10 ({GAMES})
\t           ebf1d CPyDef_server___views___Views___advance+0x36d ({SERVER})
\t           8c504 CPyDef_server___core___RoomCore___handle+0x1c4 ({SERVER})

python 18519  1363.860087:    1001001 cpu-clock:ppp:
\t          17f88a list_dealloc+0x2a ({LIB})
\t          17f8b9 Py_DECREF+0x59 (inlined)
\t           14144 CPyDef_protocol___tree___diff_trees+0x94 (/tree/protocol/native.so)
\t           ebf1d CPyDef_server___views___Views___advance+0x36d ({SERVER})
\t           8c504 CPyDef_server___core___RoomCore___handle+0x1c4 ({SERVER})

python 18519  1363.861088:    1001001 cpu-clock:ppp:
\t          12cc40 uv__run_idle+0x80 (/venv/uvloop/loop.cpython-311-x86_64-linux-gnu.so)
\t          1a2b3c [unknown] (/venv/ormsgpack/ormsgpack.cpython-311-x86_64-linux-gnu.so)
"""


def test_each_sample_becomes_its_stack_leaf_first_and_kernel_frames_are_marked() -> None:
    profile = parse(SCRIPT.splitlines())
    assert profile.samples == 4
    first = profile.stacks[0]
    assert first[:3] == [
        "[kernel] _raw_spin_unlock_irqrestore",
        "[kernel] ksys_write",
        "__GI___libc_write",
    ]
    assert profile.stacks[2][:2] == ["list_dealloc", "Py_DECREF"]  # (an inlined frame kept)
    assert profile.stacks[3] == [
        "uv__run_idle",
        "[unknown] ormsgpack.cpython-311-x86_64-linux-gnu.so",
    ]


def test_every_sample_counts_in_one_part_the_first_its_stack_reaches() -> None:
    profile = parse(SCRIPT.splitlines())
    parts = profile.parts()
    assert list(parts) == [name for name, _ in PARTS] + [OTHER]
    assert sum(parts.values()) == pytest.approx(1.0)
    # (the write inside the effects is the kernel's; the game's view inside Views.advance is
    # the game's; the diff is the views' own)
    assert parts["kernel: socket writes"] == 0.25
    assert parts["the game's views and labels"] == 0.25
    assert parts["views: tracked, diffed, hashed, framed"] == 0.25
    assert parts[OTHER] == 0.25
    assert parts["effects: frames handed out"] == 0.0
    assert part_of(["[kernel] ep_poll", "uv__io_poll"]) == "kernel: the rest (epoll, timers)"
    # the store's client awaited inside the effects is the store's (its own write the kernel's)
    append = "CPyDef_server___store___writes___fenced_Writes_gen_____mypyc_generator_helper__"
    assert part_of(["_PyEval_EvalFrameDefault", append, RUN]) == "the store"
    assert part_of(["[kernel] ksys_write", append, RUN]) == "kernel: socket writes"
    # the room's command runs under the effector's ``handle``, which carries out its effects
    # too: the core's own work is the core's, the effects' the effects'
    handle = "CPyDef_server___effector___handle_Effector_gen_____mypyc_generator_helper__"
    core = "CPyDef_server___core___RoomCore___handle"
    driven = ["CPyDef_server___steps___Driver____drive", core, handle]
    assert part_of(["_int_malloc", *driven]) == "the room core, the rest"
    assert part_of(["Py_DECREF", RUN, handle]) == "effects: frames handed out"
    now = "CPyDef_server___effector___Effector___now"
    assert part_of(["PyObject_Malloc", now, RUN, handle]) == "effects: frames handed out"


def test_inclusive_shares_count_a_function_once_per_sample_under_its_readable_name() -> None:
    profile = parse(SCRIPT.splitlines())
    shares = dict(profile.inclusive())
    assert shares["server.views.Views.advance"] == 0.5
    assert shares["server.core.RoomCore.handle"] == 0.5
    # the method and its glue are one function
    assert shares["games.yspahan.game.Yspahan.shared_view"] == 0.25
    assert shares["server.effector.Effector.execute"] == 0.25
    assert "uv__run_idle" not in shares  # (compiled functions only, by default)
    assert dict(profile.leaves())["list_dealloc"] == 0.25


@pytest.mark.parametrize(
    ("symbol", "name"),
    [
        ("CPyDef_server___views___Views___advance", "server.views.Views.advance"),
        (
            "CPyDef_server___play___act_Play_gen_____mypyc_generator_helper__",
            "server.play.Play.act",
        ),
        (
            "CPyDef_server___reader___loop_of_Reader_gen_____mypyc_generator_helper__",
            "server.reader.Reader.loop_of",
        ),
        (
            "CPyDef_server___dispatch___dispatch_gen_____mypyc_generator_helper__",
            "server.dispatch.dispatch",
        ),
        (
            "CPyDef_games___yspahan___game___Yspahan___apply__Game_glue",
            "games.yspahan.game.Yspahan.apply",
        ),
        ("CPyDef_protocol___tree____diff_trees", "protocol.tree._diff_trees"),
        ("_int_malloc", "_int_malloc"),
    ],
)
def test_compiled_names_read_as_dotted_paths(symbol: str, name: str) -> None:
    assert readable(symbol) == name
