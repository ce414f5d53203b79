"""The Lua scripts of the Redis store and the leases, in one place.

Every script's ``KEYS`` are keys of one room (one slot, so they stay legal on a Redis Cluster),
and every check precedes every write: Redis scripts do not roll back, so a refused call writes
nothing. A refusal is an error reply whose text starts with a tag that
:meth:`server.store.client.Client.refused` maps to its error:

- ``OASIS_REV``: a rev that is not the next one (:class:`~server.store.RevisionError`);
- ``OASIS_GONE``: the room is not live (:class:`~server.store.RoomGoneError`);
- ``OASIS_LEASE``: this node does not hold the room's lease (:class:`~server.store.NotOwnerError`).

The scripts that change a live room (:data:`APPEND`, :data:`SNAPSHOT`, :data:`UPDATE`,
:data:`CHAT`) begin with :data:`FENCE`. The leases' scripts (:data:`ACQUIRE`, :data:`RENEW`,
:data:`RELEASE`, used by :mod:`server.lease`) compare the token before they touch the key.
"""

from __future__ import annotations

__all__ = ["ACQUIRE", "APPEND", "CHAT", "FENCE", "RELEASE", "RENEW", "SNAPSHOT", "UPDATE"]

FENCE = """
if ARGV[#ARGV] ~= '' and redis.call('GET', KEYS[#KEYS]) ~= ARGV[#ARGV] then
  return redis.error_reply('OASIS_LEASE this node does not hold the lease of the room')
end
"""
"""Fencing (:mod:`server.lease`), prepended to the scripts that change a live room: with a lease
token (the last ``ARGV``, not empty) the room's lease key (the last ``KEYS``) must hold exactly
it, checked before any write; an empty token (a store without leases) skips the check."""

_APPEND_BODY = """
local n = redis.call('LLEN', KEYS[3])
local rev = tonumber(ARGV[1])
if rev == n + 1 then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return redis.error_reply('OASIS_GONE the room is not live')
  end
  redis.call('XADD', KEYS[2], ARGV[1] .. '-0', 'a', ARGV[2])
  redis.call('RPUSH', KEYS[3], ARGV[2])
  if #ARGV > 3 then
    redis.call('HSET', KEYS[1], unpack(ARGV, 3, #ARGV - 1))
  end
  return 1
end
if rev == n and n > 0 and redis.call('LINDEX', KEYS[3], -1) == ARGV[2] then
  return 0
end
return redis.error_reply('OASIS_REV the log is at rev ' .. n .. '; refused rev ' .. ARGV[1])
"""

_SNAPSHOT_BODY = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('OASIS_GONE the room is not live')
end
local n = redis.call('LLEN', KEYS[3])
local rev = tonumber(ARGV[1])
if rev > n then
  return redis.error_reply('OASIS_REV snapshot of rev ' .. ARGV[1] .. ' but the log ends at ' .. n)
end
local current = redis.call('HGET', KEYS[4], 'rev')
if current and tonumber(current) > rev then
  return 0
end
redis.call('HSET', KEYS[4], 'rev', ARGV[1], 'state', ARGV[2])
redis.call('XTRIM', KEYS[2], 'MINID', ARGV[1] .. '-1')
return 1
"""

_UPDATE_BODY = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('OASIS_GONE the room is not live')
end
redis.call('HSET', KEYS[1], unpack(ARGV, 1, #ARGV - 1))
return 1
"""

_CHAT_BODY = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
return 1
"""

APPEND = FENCE + _APPEND_BODY
"""KEYS meta, log, choices, lease; ARGV rev, the ``[seat, choice]`` blob, token. The rev must be
the ``choices`` length + 1: then XADD ``<rev>-0`` and RPUSH; the same rev with the same blob again
answers 0 and writes nothing (a resent append); any other rev is refused."""

SNAPSHOT = FENCE + _SNAPSHOT_BODY
"""KEYS meta, log, choices, snap, lease; ARGV rev, the snapshot blob, token. Stores the snapshot
and trims the log up to it; an older one than the stored one is ignored (0), one beyond the
log refused."""

UPDATE = FENCE + _UPDATE_BODY
"""KEYS meta, lease; ARGV field, value, ..., token: merges the fields into a live room's meta."""

CHAT = FENCE + _CHAT_BODY
"""KEYS meta, chat, lease; ARGV the line's blob, how many lines to keep, token (0: the room is
not live, the line is dropped)."""

ACQUIRE = """
local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] or string.sub(v, 1, #ARGV[3]) == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
"""KEYS lease; ARGV token, ttl in ms, ``<node id>|``: set the token if the lease is free,
already this token, or held by a dead process of this node id (1), else 0."""

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""
"""KEYS lease; ARGV token, ttl in ms: extend the lease if it holds the token (1), else 0."""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""
"""KEYS lease; ARGV token: delete the lease if it holds the token (1), else 0."""
