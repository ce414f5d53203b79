"""Prometheus metrics of one server, in its own registry (so tests can run several servers).

Names follow Prometheus conventions (``oasis_`` prefix, ``_total`` counters, base units).
``oasis_action_seconds`` times a choice from its arrival in the room's inbox to the last
audience frame written, the figure DESIGN's "Where the time goes" budgets.

Resource control (:mod:`server.quotas`): ``oasis_loop_lag_seconds`` is how late the event
loop ran a timer armed every ``LAG_PROBE_SECONDS`` (the gauge holds the last probe, the
histogram every one): what every flood is judged by, since anything that blocks the loop shows
there first. ``oasis_refused_total{limit}`` counts refusals per quota or budget,
``oasis_request_seconds{type}`` the time the shell spent handling each request type
(the room's own work on it is in its inbox, not here), ``oasis_half_open`` the TCP connections
still in the WebSocket upgrade, ``oasis_spectators`` the spectators of every room.
"""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

LAG_PROBE_SECONDS = 0.1
"""How often the event-loop lag is probed (:meth:`server.app.App._lag_probe`)."""


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Gauge("oasis_connections", "Open WebSocket connections", registry=r)
        self.rooms = Gauge("oasis_rooms", "Rooms in memory", ["state"], registry=r)
        self.frames_in = Counter(
            "oasis_frames_in_total", "Client frames received", ["type"], registry=r
        )
        self.frames_out = Counter("oasis_frames_out_total", "Frames written", registry=r)
        self.bytes_out = Counter("oasis_bytes_out_total", "Bytes of frames written", registry=r)
        self.errors = Counter("oasis_errors_total", "Error frames sent", ["code"], registry=r)
        self.actions = Counter("oasis_actions_total", "Choices applied", ["game"], registry=r)
        self.action_seconds = Histogram(
            "oasis_action_seconds",
            "From a choice entering its room to the last audience frame written",
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1.0),
            registry=r,
        )
        self.patch_bytes = Histogram(
            "oasis_patch_bytes",
            "Size of one audience's patch frame",
            buckets=(64, 128, 256, 512, 1024, 4096, 16384, 65536),
            registry=r,
        )
        self.resyncs = Counter("oasis_resyncs_total", "Slow clients resynced", registry=r)
        self.slow_closes = Counter("oasis_slow_closes_total", "Slow clients closed", registry=r)
        self.loop_lag = Gauge(
            "oasis_loop_lag_seconds", "How late the last event-loop probe ran", registry=r
        )
        self.loop_lag_seconds = Histogram(
            "oasis_loop_lag_probe_seconds",
            "How late each event-loop probe ran",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            registry=r,
        )
        self.refused = Counter(
            "oasis_refused_total", "Requests refused by a quota or budget", ["limit"], registry=r
        )
        self.request_seconds = Histogram(
            "oasis_request_seconds",
            "Time the shell spent on one request, per type",
            ["type"],
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25),
            registry=r,
        )
        self.half_open = Gauge(
            "oasis_half_open", "TCP connections still in the WebSocket upgrade", registry=r
        )
        self.spectators = Gauge("oasis_spectators", "Spectators of every room", registry=r)
        self.rejected = Counter(
            "oasis_rejected_connections_total", "Handshakes refused", ["reason"], registry=r
        )

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
