"""The store, its leases and a real node against a 3-master Redis Cluster started by the tests.

The store's own tests (``tests/server/persistence``) and the lease tests run here again, unchanged,
with ``store``, ``open_store`` and ``raw`` bound to the cluster: a room's scripts and transactions
stay in the room's slot, and the global indexes are written apart from them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio.cluster import RedisCluster as ClusterClient

from server.store.fence import Fence
from server.store.redis import RedisStore
from tests.server.cluster.test_lease import (
    Opener,
    test_a_lease_is_taken_by_one_node_only_and_renewed_only_by_it,
    test_a_node_that_lost_the_lease_cannot_append_snapshot_store_seats_or_chat,
    test_a_restarted_node_takes_its_own_leases_back_at_once,
    test_the_registry_lists_live_peers,
)
from tests.server.persistence.test_recovery import (
    test_a_hand_made_v0_snapshot_is_migrated_and_restores_the_match,
    test_a_restored_match_that_is_over_is_archived_again,
    test_a_snapshot_from_a_newer_schema_version_is_refused,
    test_restore_all_brings_every_room_back_and_reports_the_corrupt_one,
)
from tests.server.persistence.test_redis_store import (
    test_a_room_id_with_braces_is_refused,
    test_actions_after_reads_what_landed,
    test_append_to_a_room_that_is_not_live_is_refused,
    test_archive_holds_the_full_log_after_trims,
    test_duplicate_and_out_of_order_revs_are_refused,
    test_keys_of_a_room_share_one_cluster_slot,
    test_recovered_match_equals_the_live_one_at_every_rev,
    test_snapshot_has_a_schema_version_and_trims_the_log,
    test_unfinished_rooms_are_listed_oldest_first_and_deleted,
    test_update_room_merges_fields_and_keeps_the_seed,
)
from tests.services import RedisCluster

__all__ = [
    "test_a_hand_made_v0_snapshot_is_migrated_and_restores_the_match",
    "test_a_lease_is_taken_by_one_node_only_and_renewed_only_by_it",
    "test_a_node_that_lost_the_lease_cannot_append_snapshot_store_seats_or_chat",
    "test_a_restarted_node_takes_its_own_leases_back_at_once",
    "test_a_restored_match_that_is_over_is_archived_again",
    "test_a_room_id_with_braces_is_refused",
    "test_a_snapshot_from_a_newer_schema_version_is_refused",
    "test_actions_after_reads_what_landed",
    "test_append_to_a_room_that_is_not_live_is_refused",
    "test_archive_holds_the_full_log_after_trims",
    "test_duplicate_and_out_of_order_revs_are_refused",
    "test_keys_of_a_room_share_one_cluster_slot",
    "test_recovered_match_equals_the_live_one_at_every_rev",
    "test_restore_all_brings_every_room_back_and_reports_the_corrupt_one",
    "test_snapshot_has_a_schema_version_and_trims_the_log",
    "test_the_registry_lists_live_peers",
    "test_unfinished_rooms_are_listed_oldest_first_and_deleted",
    "test_update_room_merges_fields_and_keeps_the_seed",
]


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    cluster = RedisCluster(tmp_path_factory.mktemp("redis-cluster"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
async def raw(redis_cluster: RedisCluster) -> AsyncIterator[ClusterClient]:
    """A cluster client, to look at what the store wrote; every test starts on empty nodes."""
    client = ClusterClient.from_url(redis_cluster.url)
    await client.flushall(target_nodes=ClusterClient.PRIMARIES)
    try:
        yield client
    finally:
        await client.aclose()


async def _cluster_store(url: str, fence: Fence | None = None) -> RedisStore:
    store = RedisStore(url, timeout=0.5, probe_interval=0.05, cluster=True, fence=fence)
    await store.start()
    assert store.ready()
    return store


@pytest.fixture
async def store(redis_cluster: RedisCluster, raw: ClusterClient) -> AsyncIterator[RedisStore]:
    s = await _cluster_store(redis_cluster.url)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def open_store(redis_cluster: RedisCluster, raw: ClusterClient) -> AsyncIterator[Opener]:
    made: list[RedisStore] = []

    async def opener(fence: Fence | None) -> RedisStore:
        made.append(await _cluster_store(redis_cluster.url, fence))
        return made[-1]

    try:
        yield opener
    finally:
        for s in made:
            await s.close()


async def test_the_rooms_are_spread_over_the_masters(store: RedisStore, raw: ClusterClient) -> None:
    from tests.server.persistence.conftest import tiny_meta

    for i in range(30):
        await store.create_room(f"room{i}", tiny_meta(f"room{i}"))
    per_node = [
        await raw.dbsize(target_nodes=node)
        for node in raw.get_primaries()  # type: ignore[arg-type]
    ]
    assert len(per_node) == 3 and all(n > 0 for n in per_node)
    assert len(await store.unfinished_rooms()) == 30


async def test_a_node_serves_matches_on_the_cluster_and_takes_them_back_after_kill_9(
    redis_cluster: RedisCluster, raw: ClusterClient, tmp_path: Path
) -> None:
    import random

    from tests.server.cluster.test_fencing import _act, _match
    from tests.server.persistence.processes import ServerProcess
    from tests.services import free_port

    server = ServerProcess(
        free_port(),
        redis_cluster.url,
        tmp_path / "node.log",
        env={"OASIS_REDIS_CLUSTER": "1", "OASIS_NODE_ID": "a", "OASIS_LEASE_TTL": "5"},
    )
    server.start()
    try:
        client = await server.client("probe")
        await client.close()
        rng = random.Random(8)
        room, seats = await _match(server, rng, 4)
        tokens = [next(f["token"] for f in c.frames if f.get("token")) for c in seats]
        server.kill()
        server.start()  # the same node id: it takes its leases back at once
        for i, token in enumerate(tokens):
            back = await server.client(f"back{i}")
            joined = await back.request({"type": "join", "room": room, "token": token})
            assert joined["type"] == "joined" and joined["rev"] == 4, joined
            seats[i] = back
        await _act(seats, room, rng, expect="ack")
        for c in seats:
            await c.close()
    finally:
        await asyncio.to_thread(server.stop)
    assert "Traceback" not in server.log.read_text()
