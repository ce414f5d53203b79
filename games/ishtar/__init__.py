"""Ishtar: Gardens of Babylon (Bruno Cathala & Evan Singh, IELLO 2019), the rules engine.

``GAME`` is the engine the registry serves under the name ``"ishtar"``, playing the packaged
edition (``ishtar-edition.json``, a documented reconstruction; see ``edition.py``). Modules, one
concept each: ``edition`` (component data, validated at load), ``hexes`` (grid vocabulary),
``board`` (terrain layouts), ``garden`` (tiles, gardens, flowerbeds, incremental), ``state``,
``setup``, ``turn`` (choose, place, end of turn), ``actions`` (special action, skills, trees),
``scoring``, ``views``, ``snapshot``, ``explain`` (why a choice is refused), ``labels`` (the
English wording: choice labels, prompts, event texts), ``static`` (the data of ``GET
/games/ishtar``), ``game`` (the contract, a step table). The view, choices and events are
described field by field in ``protocol/games/ishtar.md``.

A turn is a sequence of decisions, each a short list of choices (``{"kind": ...}`` maps):

=============  ==========================================================================
step           choices
=============  ==========================================================================
choose         ``pile`` {pile, cost} (clockwise order), ``reserved`` {tile}, or ``skip``
pay            ``gem`` {colour}, once per gem owed (watering-can moves, or a skill's 2)
position       ``position`` {tile, at, rotations}: where the tile's space 0 (its anchor) goes,
               with the rotations that fit there; or ``discard`` {tile} when it fits nowhere
rotation       ``rotation`` {tile, at, rotation, cells}: 0..5 steps of 60 degrees ccw; ``cells``
               are the three spaces the tile covers (space 0 first), for drawing
special        ``assistant`` {at}, ``skill`` {skill}, ``pass``
take_gem       ``take_gem`` {colour} (skill F, twice)
bloom          ``bloom`` {token, cells} (skills G, H; the first cell gets the 2 flowers)
reserve_tree   ``reserve_tree`` {card} (skill I)
reserve_tile   ``reserve_tile`` {pile, tile} (skill J)
plant          ``buy`` {card} or ``end_turn``
tree           ``tree`` {card, at}: where the bought card's tree goes
=============  ==========================================================================

``rotations`` and ``cells`` are derived (``Ishtar.derived_fields``): a choice answered as a map
may leave them out, naming only the tile, the anchor and (for a rotation) the rotation; when
they are sent they must be exact. As in every game, values must have the listed types (``true``
is not ``1``).

Collecting gems, freeing assistants and refilling the display need no decision and happen as
events. A special step with nothing to do but pass is skipped (event ``special_unavailable``).

Decisions where the rulebook is silent (besides ishtar.md section (d), which the edition and the
engine follow: limited gem stock, 20 markers, skill columns A/F..E/J, lower skills act at once,
token shapes, adjacency counted once per player, shared victory on ties):

- ISH-OPEN-1: the can never goes all the way round; the choices are the other non-empty piles.
- ISH-OPEN-2: a tile (chosen or reserved) that fits nowhere is discarded, out of the game; the
  turn goes on to the Plant step (no gems, no special action).
- ISH-OPEN-3: if only the pile under the can has tiles, the player takes from it (the can stays
  and nothing is revealed); with no tile anywhere (and no reserved tile) choose and place are
  skipped.
- ISH-OPEN-4: after a skill J reservation the pile's new top is turned face up at once.
- ISH-OPEN-5/-6/-7: skill I reserves a face-up display card only; the card keeps its tree marker;
  the display is refilled at the end of the Plant step, like after purchases.
- ISH-OPEN-8: a reserved card may be planted in the Plant step of the same turn.
- ISH-OPEN-9: a card revealed when the marker reserve is empty stays on display, unbuyable.
- ISH-OPEN-10: G, H, I and J are offered only when they can act (a legal token spot, a display
  card, a face-up pile top); F is always offered (it gives what the stock has left).
- ISH-OPEN-11: a two-space token may straddle two tiles.
- ISH-OPEN-12: the flowers of the space under an assistant count.
- ISH-OPEN-13/-14: C counts the supply only; D counts every player's trees.
- ISH-OPEN-15: the English rulebook wins: fountain ties all control; the round is finished.
- The first player is drawn at random (the random player board with the first-player mark);
  seats take the edition's colours in order (yellow, blue, pink, orange).
- Placement is split into position then rotation (both lists short); an assistant goes on the
  icon's space; a bought tree card is chosen first, then its tree's space.
- Hidden information: the new top of the pile the can stands on stays hidden from everybody,
  the taker included, until the can leaves; the tile taken is public; a planted card's identity
  goes in the event's private part for its owner (the display change is public anyway).
"""

from games.ishtar.game import GAME, Ishtar

__all__ = ["GAME", "Ishtar"]
