"""The reference terminal client of Oasis, speaking only the protocol (``protocol/``).

Modules: :mod:`.connection` (a session over one WebSocket: requests, answers, resync, reconnect
and resume, the asyncio shell around :class:`protocol.mirror.Mirror`), :mod:`.choices` (texts for
legal choices), :mod:`.render` (rich drawings per game), :mod:`.errors` (sentences for error
codes), :mod:`.lobby` (rooms, create, join, quick, play), :mod:`.play` (the interactive loop),
:mod:`.watch` (spectator), :mod:`.bots` (client-side bots as a load tool). The wire itself (the
view mirror, patch apply, view hash) is ``protocol``'s, so any Python frontend shares it.

It never imports ``games`` or ``server`` (a test checks): the server tells each seat what it may
do, so the client needs no rules. The surface is its modules: each command is reached through
the ``oasis`` launcher, nothing here is a library.
"""

__all__ = ["bots", "choices", "connection", "errors", "lobby", "play", "render", "watch"]
