"""Hypothesis strategies for JSON-like documents (what views are made of)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
keys = st.text(alphabet=st.sampled_from("ab~/0-_é"), max_size=4)


def documents(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5) | st.dictionaries(keys, children, max_size=5)
        ),
        max_leaves=max_leaves,
    )


@st.composite
def related_pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    """Two documents where the second is usually an edit of the first (diffs worth testing)."""
    a = draw(documents())
    if draw(st.booleans()):
        return a, draw(documents())
    return a, draw(_edit(a))


def _edit(doc: Any) -> st.SearchStrategy[Any]:
    if isinstance(doc, dict) and doc:
        return st.builds(
            lambda d, k, v, drop: {
                **{key: val for key, val in d.items() if key != drop},
                k: v,
            },
            st.just(doc),
            keys,
            documents(6),
            st.sampled_from(sorted(doc)),
        )
    if isinstance(doc, list):
        return st.builds(lambda extra, cut: (doc + extra)[: max(0, len(doc) + len(extra) - cut)],
                         st.lists(documents(4), max_size=3), st.integers(0, 3))  # fmt: skip
    return documents(6)
