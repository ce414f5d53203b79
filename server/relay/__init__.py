"""Spectators served by any node: the owner publishes each room's spectator feed on Redis pub/sub,
and a node with spectators of a room it does not own relays that feed to them.

A package of one concept per module, from the bottom up:

- :mod:`.wire`: what travels on Redis, each format with its writer and its reader, and the
  timings both sides agree on (no I/O);
- :mod:`.publisher`: the owner's side, :class:`Publisher` (the feed of the rooms some node
  relays, the relays' interest, their spectators' chat lines);
- :mod:`.relayed`: one room relayed here, :class:`~.relayed.Relayed` (its view kept from the
  owner's messages, gaps repaired, the delay applied);
- :mod:`.subscriber`: the relay node's one pub/sub connection, its announcements and reads;
- :mod:`.counts`: every node's spectator counts of each room, for the lobby's listings;
- :mod:`.spectators`: the relay node's side, :class:`Relay` (its relay spectators' requests).

Callers import the names below from ``server.relay``; the modules are the relay's own.

**Interest.** A room's feed costs Redis work (a write of the whole spectator view, a publish)
at every revision, so an owner publishes only the rooms some node relays. A relay node announces
on the one channel ``P:relay:interest`` (every node listens, one pub/sub connection each):
``open|<node>|<room>`` when it gets a room's first spectator, ``keep|<node>|<room>`` every
:data:`~.wire.CHECK_EVERY` seconds while it has any, ``bye|<node>|<room>`` after the last one
left. Every node keeps what it hears in memory (room -> relay node -> until when,
:data:`~.wire.INTEREST_TTL` seconds after the last announcement), for every room, not only its
own: a room that moves here (failover, hand-off) is published from its first revision here. The
owner answers ``open`` (and the first ``keep`` of a room it did not write yet: it just took the
room over) by writing the room's state key at once, then a ``state`` notice on the room's
channel; the relay waits :data:`~.spectators.OPEN_WAIT` seconds for that notice (else its
spectator is redirected to the owner, as without a relay). When a room's last relay node said
``bye`` or stopped announcing, its owner publishes nothing more of it and deletes its state key.
What a revision of a room nobody relays costs: one dict lookup.

**Owner side** (:class:`Publisher`). Every revision of a relayed room served here is
published, as the very spectator ``patch`` frame the room encoded once (rev, ops, hash,
events), on the room's channel ``P:{room}:spectate``; so are the ``room`` frames (info) and
the chat lines of seats. Before each patch, the room's *spectator state* key
``P:{room}:spectate:state`` (a hash: rev, hash, view, info) is set to the live spectator view
at that revision, built from the bytes the views already keep (no encode of the view): a
relay that sees a patch of rev ``r`` can always read a state at ``r`` or later. Frames are
queued without awaiting and written by one task per node, a pipeline per batch, so a room
never waits on the relay.

**Relay side** (:class:`Relay`). A ``spectate`` for a room another node holds (a live lease) is
served here: the node subscribes to the room's channel while it has spectators of it (one
pub/sub connection per node), announces ``open``, reads the state key once the owner's
``state`` notice arrived, and from then on writes each frame it
receives, as received (one encoded frame per revision per node, the same bytes to every
socket), to its local spectators; it keeps the spectator view up to date by applying each
patch's ops, for newcomers, ``sync`` and resyncs. The room's ``spectator_delay`` applies here:
frames (and the first state) wait in a queue released by a timer, as on the owner.

**Gaps.** A patch whose rev is not the next one (a message lost, a Redis reconnect, the owner
changed) makes the relay read the state key again and send ``state`` to its spectators before
any later patch: a spectator never gets a patch that does not fit its view. The same read runs
when the pub/sub connection re-subscribes after a reconnect, on a ``state`` notice ahead of
the relay's rev and, every :data:`~.wire.CHECK_EVERY` seconds, for each relayed room (a lost
*last* patch is found that way). An owner change
(failover, hand-off) is seamless when the new owner's revisions follow on, a resync otherwise.

**Limits.** Relay spectators count in the node's ``spectators_per_node`` tally and a relayed
room takes at most ``spectators_per_room`` of them on this node (:mod:`server.quotas`). Every
:data:`~.wire.CHECK_EVERY` seconds the node writes how many spectators it serves of each room in
``P:{room}:spectators`` (node -> count, valid :data:`~.wire.COUNT_TTL` seconds), so does every
node for the spectators of its own rooms; ``list_rooms`` shows each room's ``spectators`` as this
node's live count plus the other nodes' last written ones (:func:`spectator_counts`).

**Chat.** A relay spectator's ``chat`` is checked here (the room's ``spectator_chat`` from its
info, the owners' chat rates per speaker and per room) and forwarded to the owner on the one
channel ``P:relay:chat`` (msgpack ``[room, session, text]``, every node listens with its
interest connection); the spectator gets ``ack`` once it is forwarded. The owner checks the
same rules again and says the line as a spectator's (stored, sent to its members, published
to the relays: the speaker sees it come back), or logs why not (storage unavailable, a rate
raced): the ``ack`` means "forwarded", not "said". Spectators' lines are not delayed, on the
owner or on a relay.

Not relayed: rooms whose ``spectator_delay`` is above :data:`~.spectators.MAX_RELAYED_DELAY`
(redirected). Redis Cluster: the asyncio cluster client of redis-py has no pub/sub, so with
``OASIS_REDIS_CLUSTER`` there is no relay and spectators are redirected as before.
"""

from server.relay.counts import spectator_counts
from server.relay.publisher import Publisher
from server.relay.spectators import Relay

__all__ = ["Publisher", "Relay", "spectator_counts"]
