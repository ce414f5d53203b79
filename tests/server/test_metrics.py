"""The server's hot metrics (plain numbers read at scrape) expose exactly what the Prometheus
client library's own counters and histograms would for the same increments."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server.metrics import Metrics, Spreads, Tallies

BUCKETS = (0.0001, 0.00025, 0.001, 0.1, 1.0)


def _lines(registry: CollectorRegistry) -> list[str]:
    """The exposition without the library's ``_created`` samples (ours have none)."""
    text = generate_latest(registry).decode()
    return sorted(line for line in text.splitlines() if "_created" not in line)


def test_tallies_and_spreads_expose_what_the_client_library_would() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    frames = Tallies("t_frames_total", "Frames", None, ours)
    by_type = Tallies("t_in_total", "In", "type", ours)
    seconds = Spreads("t_seconds", "Seconds", None, BUCKETS, ours)
    per_type = Spreads("t_request_seconds", "Per type", "type", BUCKETS, ours)
    frames_lib = Counter("t_frames_total", "Frames", registry=theirs)
    by_type_lib = Counter("t_in_total", "In", ["type"], registry=theirs)
    seconds_lib = Histogram("t_seconds", "Seconds", buckets=BUCKETS, registry=theirs)
    per_type_lib = Histogram("t_request_seconds", "Per type", ["type"], buckets=BUCKETS,
                             registry=theirs)  # fmt: skip
    # Values on bucket bounds too: a bound is inclusive in both.
    for value in (0.00005, 0.0001, 0.0002, 0.00025, 0.5, 1.0, 3.0):
        seconds.observe(value)
        seconds_lib.observe(value)
        per_type.labels("act").observe(value)
        per_type_lib.labels("act").observe(value)
    per_type.labels("join").observe(0.001)
    per_type_lib.labels("join").observe(0.001)
    for kind, amount in (("act", 1), ("join", 2), ("act", 3)):
        frames.inc(amount)
        frames_lib.inc(amount)
        by_type.labels(kind).inc()
        by_type_lib.labels(kind).inc()
    assert _lines(ours) == _lines(theirs)
    assert frames.value == 6
    assert 't_in_total{type="act"} 2.0' in _lines(ours)


def test_the_server_metrics_render_every_hot_family() -> None:
    metrics = Metrics()
    metrics.frames_in.labels("act").inc()
    metrics.frames_out.inc()
    metrics.bytes_out.inc(120)
    metrics.actions.labels("yspahan").inc()
    metrics.action_seconds.observe(0.0003)
    metrics.patch_bytes.observe(200)
    metrics.request_seconds.labels("act").observe(0.0002)
    metrics.rooms.labels("open").inc()
    assert metrics.rooms.labels("open") is metrics.rooms.labels("open")
    body = metrics.render()[0].decode()
    for line in (
        'oasis_frames_in_total{type="act"} 1.0',
        "oasis_frames_out_total 1.0",
        "oasis_bytes_out_total 120.0",
        'oasis_actions_total{game="yspahan"} 1.0',
        'oasis_action_seconds_bucket{le="0.0005"} 1.0',
        "oasis_action_seconds_count 1.0",
        'oasis_patch_bytes_bucket{le="128.0"} 0.0',
        'oasis_patch_bytes_bucket{le="256.0"} 1.0',
        'oasis_request_seconds_bucket{le="0.00025",type="act"} 1.0',
        'oasis_rooms{state="open"} 1.0',
    ):
        assert line in body.splitlines(), line
