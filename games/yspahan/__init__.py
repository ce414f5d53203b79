"""Yspahan (Sébastien Pauchon, Ystari 2006): the rules engine, for 2 to 4 players.

Rules: the French rules in ``shared/seeds/004_1dd905bdcbec1a87.txt`` (they win over any other
source), Ystari's official 2-player rules, and the component data of ``yspahan.json`` (a packaged
copy of ``shared/data/yspahan.json``). Clause ids (``YSP-...``) refer to the YSP section of
``shared/data/rules-checklist.md``.

Modules: :mod:`.data` (tables), :mod:`.state` (state, snapshots), :mod:`.city` (shops and souks),
:mod:`.tower` (dice), :mod:`.steward` (path), :mod:`.caravan`, :mod:`.buildings`, :mod:`.cards`,
:mod:`.scoring`, :mod:`.turn` (days, order, weeks), :mod:`.decisions`, :mod:`.actions`,
:mod:`.views`, :mod:`.game` (the contract).

Decisions where the rules are silent or ambiguous (each one is tested, citing its id):

- YSP-OPEN-1: "finish a partly filled souk before starting another" applies within the quarter
  being played. With two partly filled souks there (the steward emptied part of a complete one),
  any empty shop of either is legal.
- YSP-OPEN-2: goods are placed one at a time, each in any legal shop, until all are placed or no
  shop is legal; the player is not forced to pick the placement that fits the most goods.
- YSP-OPEN-3 / YSP-ORDER-04: with 4 players on the last day, ties on VP keep the clockwise order
  counted from that day's pawn holder.
- YSP-OPEN-4 / YSP-ORDER-05: that day the first to act (the lowest score) buys yellow dice and
  rolls.
- YSP-OPEN-5: 0-square steward moves are legal (when gold or the Hammam reach 0); at most one card
  per group as an extra die; Caravanserai draws for goods sent from the reserve by a camel payment
  but not for the caravan card's good; build-without credits stay until used (they stack, and a
  purchase uses one credit of a kind only if the building's price has some of that kind).
- YSP-OPEN-6: cards are played only during one's own turn, at two points of it: before taking a
  group and after the action (not in the middle of a placement or a steward move, and not during
  the yellow-dice choice). An owner cannot play a card to afford a camel payment in another
  player's turn.
- YSP-OPEN-7: a card discarded as an extra die is shown to everyone (event ``extra_die``), like
  every discard; the discard pile is public.
- YSP-OPEN-8: with 2 players, if only yellow-only groups are left for the other player, they have
  no group and draw a card.
- YSP-OPEN-9: with 3-4 players, a player who drew for lack of a group may still build.
- YSP-OPEN-10: a good sent from the reserve in place of a kept one takes its place in the order.
- The amount cards (gold for VP, camels for VP, exchange) accept 0 too: the card is then simply
  discarded. The one-good card is offered only when some shop is legal for its player.
- A group's own action is offered even when it cannot do anything (a goods action in a full
  quarter places nothing); the extra die is offered only with the floor action (YSP-CARD-04).
- With 2 players the other player counts only the white dice of a group (YSP-TOWER-15): that is
  what "those yellow dice are discarded" does to the camels, gold and goods actions; the steward
  still moves by the group's face value.
- Decisions with one possible answer are skipped: a roller with no gold rolls without yellow dice,
  and an owner without camels does not get the camel-payment question.
"""

from __future__ import annotations

from games.yspahan.game import GAME, Yspahan

__all__ = ["GAME", "Yspahan"]
