"""The reference terminal client of Oasis, speaking only the protocol (``protocol/``).

Modules: :mod:`.connection` (a session over one WebSocket: requests, answers, resync, reconnect
and resume, the asyncio shell around :class:`protocol.mirror.Mirror`), :mod:`.choices` (texts for
legal choices), :mod:`.render` (rich drawings per game, the full screen's layout),
:mod:`.errors` (sentences for error codes), :mod:`.lobby` (rooms, create, join, quick, play),
:mod:`.play` (the interactive loop), :mod:`.after_match` (its end of a match: play again, follow
a rematch), :mod:`.fullscreen` and :mod:`.plain` (its two screens:
redrawn in place, or lines), :mod:`.keys` (keystrokes), :mod:`.intents` (what a typed line
means), :mod:`.hexgrid` (Ishtar's spaces by name), :mod:`.notices` (sentences about a room:
who is really playing, a week's scoring, a seat left, a rematch's new match),
:mod:`.printable` (server text made safe to print), :mod:`.gamedata` and :mod:`.reference`
(``GET /games/<name>`` and the ``h`` reference), :mod:`.watch` (spectator), :mod:`.bots`
(client-side bots as a load tool). The wire itself (the view mirror, patch apply, view hash) is
``protocol``'s, so any Python frontend shares it.

It never imports ``games`` or ``server`` (a test checks): the server tells each seat what it may
do, so the client needs no rules. The surface is its modules: each command is reached through
the ``oasis`` launcher, nothing here is a library.
"""

__all__ = [
    "after_match",
    "bots",
    "choices",
    "connection",
    "errors",
    "fullscreen",
    "gamedata",
    "hexgrid",
    "intents",
    "keys",
    "lobby",
    "notices",
    "plain",
    "play",
    "printable",
    "reference",
    "render",
    "watch",
]
