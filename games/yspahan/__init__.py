"""Yspahan (Sébastien Pauchon, Ystari 2006): the rules engine, for 2 to 4 players.

Rules: the French rules in ``shared/seeds/004_1dd905bdcbec1a87.txt`` (they win over any other
source), Ystari's official 2-player rules, and the component data of ``yspahan.json`` (a packaged
copy of ``shared/data/yspahan.json``). Clause ids (``YSP-...``) refer to the YSP section of
``shared/data/rules-checklist.md``.

Modules: :mod:`.data` (tables), :mod:`.state` (state, snapshots), :mod:`.city` (shops and souks),
:mod:`.tower` (dice), :mod:`.steward` (path), :mod:`.caravan`, :mod:`.buildings`, :mod:`.cards`,
:mod:`.scoring`, :mod:`.turn` (days, order, weeks), :mod:`.decisions`, :mod:`.actions`,
:mod:`.views`, :mod:`.labels` (the English wording and the choices' effects), :mod:`.nouns`
(components' names), :mod:`.static` (the data of ``GET /games/yspahan``), :mod:`.game` (the
contract). The view, choices and events are described in ``protocol/games/yspahan.md``.

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
- YSP-OPEN-5 (revised: the seed's words win over Boardspace, issue 22): the steward must move
  («doit déplacer»): a move ends at least one square away, gold and the Hammam adjusting the
  distance between 1 and the path's reach (Boardspace's 0-square move, YSP-STEWARD-08, is
  refused); any number of cards may each add one die to the group chosen for its floor action
  («autant de cartes ... qu'il le souhaite»; Boardspace's one card, YSP-CARD-03, is not
  followed); the Caravanserai draws a card each time one of its owner's goods reaches the
  caravan, by any means («chaque fois»): from a shop, from the reserve by a camel payment, and
  by the caravan card (Boardspace's exception, YSP-BUILD-14, is not followed); when the deck is
  empty the discard pile is reshuffled into a new deck, and with both empty no card is drawn
  and none is owed. Build-without credits stay until used (they stack, and a purchase uses one
  credit of a kind only if the building's price has some of that kind), as Boardspace.
- YSP-OPEN-6 (revised): cards are played only during one's own turn («Au cours de son tour de
  jeu»), but at any decision of it («A tout moment»): the ``turn`` and ``after`` decisions list
  the card plays; every other decision of the turn (extra dice, goods, steward, send, the
  actor's own keep, the 2-player build) offers one ``cards`` choice opening the card list, and
  comes back afterwards asked afresh. Not during the yellow-dice choice (the tower is filled
  before the turns), not inside a card's own follow-up (an amount, the one-good placement), and
  never in another player's turn: an owner cannot play the 3-camels card during another
  player's steward move to afford a camel payment. The actor's own good is asked about even
  without a camel while they hold a card (which may give them one: 3 camels, the exchange);
  only public facts decide whether a question is asked, so it reveals nothing of a hand.
- A card played during a 2-player build that leaves no building affordable spends the group on
  nothing (event ``no_build``): the player chose to spend what the build needed.
- YSP-OPEN-7: a card discarded as an extra die is shown to everyone (event ``extra_die``), like
  every discard; the discard pile is public.
- YSP-OPEN-8: with 2 players, if only yellow-only groups are left for the other player, they have
  no group and draw a card.
- YSP-OPEN-9: with 3-4 players, a player who drew for lack of a group may still build.
- YSP-OPEN-10: a good sent from the reserve in place of a kept one takes its place in the order.
- The amount cards (gold for VP, camels for VP, exchange) accept 0 too: the card is then simply
  discarded. The one-good card is offered only when some shop is legal for its player.
- A group's own action is offered even when it cannot do anything (a goods action in a full
  quarter places nothing); extra dice are asked for only after the floor action is chosen, one
  card at a time until the player stops (YSP-CARD-04: the steward and card actions do not use
  them), and the group stays on the tower until then (the ``take`` event counts every die).
- With 2 players the other player counts only the white dice of a group (YSP-TOWER-15): that is
  what "those yellow dice are discarded" does to the camels, gold and goods actions; the steward
  still moves by the group's face value.
- Decisions with one possible answer are skipped: a roller with no gold rolls without yellow dice,
  a player without cards is not asked for extra dice, and an owner without camels does not get
  the camel-payment question (unless YSP-OPEN-6 gives them a card to play first).
- Events say what happened: ``take`` counts the dice the action uses, extra ones included
  (``extra_dice``); ``yellow_removed`` counts the yellow dice taken off the tower after the
  roller's action, not those bought, and is sent only when some were left.
- Snapshots carry ``schema`` 2; schema-1 dumps of the previous release load migrated
  (:mod:`.state`), and its stored choices (a ``take`` naming its one ``extra`` card) still apply.
"""

from __future__ import annotations

from games.yspahan.game import GAME, Yspahan

__all__ = ["GAME", "Yspahan"]
