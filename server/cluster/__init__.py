"""Several nodes over one Redis: which rooms this node serves, and where clients of others go.

One :class:`Cluster` per node (when the store is Redis), beside the :class:`~server.app.App`:

- **Start-up** (:meth:`Cluster.start`, before the server listens): list the node, then take and
  restore every live room whose lease is free or held by a dead process of this node id
  (:mod:`server.lease`); rooms other nodes hold stay theirs.
- **The loop**, every third of ``lease_ttl``: heartbeat, renew the leases of the rooms served here
  (a room whose lease another node took is *evicted*: its task stops, its members are told where
  it went; a lease that merely lapsed is taken back),
  free the leases of rooms that closed here, and take over orphans: live rooms whose lease expired
  because their node died. A dead node's rooms therefore come back on the others within a ttl and
  a third after its last renewal.
- **Routing** (:meth:`Cluster.route`): a request for a room this node does not serve is answered
  with a ``redirect`` frame naming the owner's public address; a room with no owner is taken
  over here on the spot (so a client of a dead or stopping node's room is served as soon as the
  lease is free, without waiting for the loop).
- **Lobby across nodes**: ``list_rooms`` pages through Redis's index of live rooms (by creation
  time), reading the listed fields of at most :data:`~server.listing.MAX_SCAN` other nodes'
  rooms per page (:meth:`Cluster.page`); ``quick`` looks at the oldest
  :data:`~.directory.QUICK_SCAN` live rooms the same way (:meth:`Cluster.quick`); a quick match
  in another node's room is a ``redirect`` there. Neither reads every room's meta.
- **Stopping** (:meth:`Cluster.hand_off`, on SIGTERM after the rooms finished their inboxes):
  snapshot each room (where no step is open to an undo), release its lease, leave the
  registry and name a live peer, which the
  ``bye`` frame passes on to the clients; that peer (or any) takes the rooms over at once when
  their clients arrive.
- **Fencing**: the store refuses any write of a room whose lease this node does not hold
  (:class:`~server.store.NotOwnerError`); the store calls :meth:`Cluster.not_owner`, which
  takes a lapsed lease back if no node holds it (the room stays, members and all), and
  otherwise evicts the room at once.

A package of one concept per module, from the bottom up:

- :mod:`.claims`: taking rooms over, :class:`~.claims.Claims` (the leases held, the orphans
  and the on-the-spot claims restored under them, a lapsed lease taken back);
- :mod:`.eviction`: losing a room, :class:`~.eviction.Eviction` (out of the lobby, its
  members redirected to the new owner);
- :mod:`.directory`: the lobby across nodes, :class:`~.directory.Directory` (``list_rooms``
  and ``quick`` over Redis's index of live rooms);
- :mod:`.node`: :class:`Cluster`, which composes them and runs the start-up, the loop, the
  routing and the hand-off, and the node's lease token (:func:`fence_of`).

Callers import the names below from ``server.cluster``; the modules are the cluster's own.
"""

from server.cluster.node import Cluster, default_url, fence_of

__all__ = ["Cluster", "default_url", "fence_of"]
