"""A small deterministic random generator whose whole state is one integer.

Rules engines keep their generator inside the game state, so a snapshot restores it and the same
seed gives the same match byte for byte on every platform and Python version. SplitMix64 is
enough for shuffling tiles and rolling dice: it is simple, passes BigCrush, and its state (a
single 64-bit int) serialises trivially. The state must never appear in a view.

Its draws have a native twin, ``games._gamesc`` (``games/_gamesc.c``, built with the compiled
modules): the same steps on a machine word, where Python computes on integers beyond 62 bits
(heap objects even when compiled: about 7,000 instructions a draw, a shuffle of Tiny's deck 11
draws). :class:`Rng` calls it when it imports (:data:`NATIVE`) and the Python here otherwise;
``tests/games/test_rng.py`` compares the two draw by draw.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, Final, TypeVar

T = TypeVar("T")

_MASK: Final = (1 << 64) - 1
_GAMMA: Final = 0x9E3779B97F4A7C15


def _next_u64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: the next state and the draw it gives."""
    state = (state + _GAMMA) & _MASK
    z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def _below(state: int, n: int) -> tuple[int, int]:
    """The state after a uniform draw in ``[0, n)``, ``n >= 1``, and the draw (rejection
    sampling, no modulo bias)."""
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        state, x = _next_u64(state)
        if x < limit:
            return state, x % n


def _shuffle(state: int, items: MutableSequence[T]) -> int:
    """Fisher-Yates of ``items`` in place; the state after it."""
    for i in range(len(items) - 1, 0, -1):
        state, j = _below(state, i + 1)
        items[i], items[j] = items[j], items[i]
    return state


def _native() -> Any:
    """``games._gamesc``, the same draws in C (and :mod:`games.base`'s memo key of a text), or
    None where it is not built (pure Python, or a compiled build without it)."""
    try:
        return importlib.import_module("games._gamesc")
    except ImportError:
        return None


NATIVE: Final[Any] = _native()
"""The games' C extension, imported once for :mod:`games.base` too (None: not built)."""
_NEXT: Final[Callable[[int], tuple[int, int]]] = _next_u64 if NATIVE is None else NATIVE.next_u64
_BELOW: Final[Callable[[int, int], tuple[int, int]]] = (
    _below if NATIVE is None else NATIVE.below
)  # (native: for n < 2**64, a machine word)
_SHUFFLE: Final[Callable[[int, list[Any]], int]] = (
    _shuffle if NATIVE is None else NATIVE.shuffle
)  # (native: for a list only)
"""(The draws bound once: Final, held in C statics when compiled.)"""


class Rng:
    """SplitMix64; ``state`` is the only field and is what snapshots store."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _MASK

    def __reduce__(self) -> tuple[type[Rng], tuple[int]]:
        """Copied and pickled as its state (``copy.deepcopy`` of a game state that holds one,
        as the tests' tiny game does): compiled, the class has no instance dict to copy and
        its constructor needs the state."""
        return (Rng, (self.state,))

    @classmethod
    def from_seed(cls, seed: int) -> Rng:
        """Mix the seed once so that nearby seeds give unrelated streams."""
        rng = cls(seed)
        rng.state = rng.next_u64()
        return rng

    def next_u64(self) -> int:
        drawn = _NEXT(self.state)
        self.state = drawn[0]
        return drawn[1]

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        drawn = _BELOW(self.state, n) if n <= _MASK else _below(self.state, n)
        self.state = drawn[0]
        return drawn[1]

    def die(self, sides: int = 6) -> int:
        """A roll of a die with faces ``1..sides``."""
        return self.below(sides) + 1

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place."""
        if type(items) is list:
            self.state = _SHUFFLE(self.state, items)
        else:
            self.state = _shuffle(self.state, items)
