"""A small deterministic random generator whose whole state is one integer.

Rules engines keep their generator inside the game state, so a snapshot restores it and the same
seed gives the same match byte for byte on every platform and Python version. SplitMix64 is
enough for shuffling tiles and rolling dice: it is fast in pure Python, passes BigCrush, and its
state (a single 64-bit int) serialises trivially. The state must never appear in a view.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Final, TypeVar

T = TypeVar("T")

_MASK: Final = (1 << 64) - 1
_GAMMA: Final = 0x9E3779B97F4A7C15


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
        self.state = (self.state + _GAMMA) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def die(self, sides: int = 6) -> int:
        """A roll of a die with faces ``1..sides``."""
        return self.below(sides) + 1

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
