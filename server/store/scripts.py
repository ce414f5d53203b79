"""The Lua scripts of the Redis store and the leases, in one place.

Every script's ``KEYS`` are keys of one room (one slot, so they stay legal on a Redis Cluster),
and every check precedes every write: Redis scripts do not roll back, so a refused call writes
nothing. A refusal is an error reply whose text starts with a tag that
:meth:`server.store.client.Client.refused` maps to its error:

- ``OASIS_REV``: a rev that is not the next one (:class:`~server.store.RevisionError`);
- ``OASIS_GONE``: the room is not live (:class:`~server.store.RoomGoneError`);
- ``OASIS_LEASE``: this node does not hold the room's lease (:class:`~server.store.NotOwnerError`).

:data:`CREATE` and :data:`ARCHIVE` begin and end a room's life in one call each, so that they
join the group commit's batches like every other write of a room (:mod:`server.store.writes`).

The scripts that change a live room (:data:`APPEND`, :data:`SNAPSHOT`, :data:`UPDATE`,
:data:`CHAT`) begin with :data:`FENCE`. The leases' scripts (:data:`ACQUIRE`, :data:`RENEW`,
:data:`RELEASE`, used by :mod:`server.lease`) compare the token before they touch the key.
"""

from __future__ import annotations

__all__ = [
    "ACQUIRE",
    "APPEND",
    "ARCHIVE",
    "CHAT",
    "CREATE",
    "FENCE",
    "RELEASE",
    "RENEW",
    "SNAPSHOT",
    "UPDATE",
]

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

CREATE = """
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
if #ARGV > 4 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 5, #ARGV))
end
if ARGV[1] ~= '' then
  redis.call('SET', KEYS[6], ARGV[1], 'PX', ARGV[2])
end
if #KEYS > 6 then
  redis.call('ZADD', KEYS[7], ARGV[4], ARGV[3])
end
return 1
"""
"""KEYS meta, log, choices, snap, chat, lease[, rooms]; ARGV token, lease ms, room, creation
time, field, value, ...: drops what an earlier room of the id left, stores the meta, takes the
lease (with a token: the creating node owns the room from its first write) and lists the room
as live (the ``rooms`` key: not on a Redis Cluster, which writes that index apart)."""

_MSGPACK = """
local function head(n, fix, b16, b32)
  if n < 16 then return string.char(fix + n) end
  if n < 65536 then return string.char(b16) .. struct.pack('>I2', n) end
  return string.char(b32) .. struct.pack('>I4', n)
end
local function str(s)
  local n = #s
  if n < 32 then return string.char(0xa0 + n) .. s end
  if n < 256 then return string.char(0xd9, n) .. s end
  if n < 65536 then return string.char(0xda) .. struct.pack('>I2', n) .. s end
  return string.char(0xdb) .. struct.pack('>I4', n) .. s
end
local function list(items)
  return head(#items, 0x90, 0xdc, 0xdd) .. table.concat(items)
end
local function kind(blob)
  local b = string.byte(blob, 1) or 0xc1
  if b <= 0x7f or b >= 0xe0 or (b >= 0xcc and b <= 0xd3) then return 'int' end
  if (b >= 0xa0 and b <= 0xbf) or (b >= 0xd9 and b <= 0xdb) then return 'str' end
  if (b >= 0x80 and b <= 0x8f) or b == 0xde or b == 0xdf then return 'map' end
  return ''
end
"""

_ARCHIVE_BODY = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[4]) == 1 then
    return 0
  end
  return redis.error_reply('OASIS_GONE the room is not live')
end
local flat = redis.call('HGETALL', KEYS[1])
local fields, parts = {}, {}
for i = 1, #flat, 2 do
  fields[flat[i]] = flat[i + 1]
  parts[#parts + 1] = str(flat[i]) .. flat[i + 1]
end
local function typed(name, want, absent)
  local blob = fields[name]
  if blob == nil then return absent end
  if kind(blob) == want then return blob end
  return '\\192'
end
local blob = table.concat({
  ARGV[1],
  str('game'), typed('game', 'str', '\\192'),
  str('players'), typed('players', 'int', '\\192'),
  str('options'), typed('options', 'map', '\\128'),
  str('seed'), typed('seed', 'int', '\\192'),
  str('actions'), list(redis.call('LRANGE', KEYS[2], 0, -1)),
  str('result'), ARGV[2],
  str('chat'), list(redis.call('LRANGE', KEYS[3], 0, -1)),
  str('meta'), head(#parts, 0x80, 0xde, 0xdf), table.concat(parts),
  str('finished'), ARGV[3],
})
if ARGV[5] ~= '0' then
  redis.call('SET', KEYS[4], blob, 'EX', ARGV[5])
else
  redis.call('SET', KEYS[4], blob)
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[5], KEYS[6])
if #KEYS > 6 then
  redis.call('ZREM', KEYS[7], ARGV[7])
  redis.call('ZADD', KEYS[8], ARGV[4], ARGV[7])
  if ARGV[6] ~= '' then
    redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', ARGV[6])
  end
end
return 1
"""

ARCHIVE = _MSGPACK + _ARCHIVE_BODY
"""KEYS meta, choices, chat, archive, log, snap[, rooms, archived]; ARGV the archive map's
msgpack head (its size and first fields: ``schema_version``, ``room``), the result's blob, the
finish time's blob, the finish time (the index's score), the expiry in seconds (0: none), the
index's expiry bound (``(<score>``, or empty), the room. Writes the archive of a live room
exactly as :func:`server.store.records.archive_blob` packs it (the stored blobs are msgpack
already: the choices, the chat lines and the meta's values go in as they are, and game,
players, options and seed are taken as :meth:`.RoomMeta.from_json` takes them), deletes the
room's live keys and moves it from the live index to the archived one (the two index keys:
not on a Redis Cluster). A room already archived answers 0 (finishing twice is harmless); a
room neither live nor archived is refused."""

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

COUNTS = """
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, ARGV[1], ARGV[i + 2])
  redis.call('PEXPIRE', key, ARGV[2])
end
return #KEYS
"""
"""KEYS rooms' spectator counts (``P:{room}:spectators``); ARGV this node's id, their expiry in
ms, then each room's count value in the order of KEYS: a node's counts of many rooms in one
command (:class:`server.relay.counts.Census`; keys of many slots: a single Redis only)."""
