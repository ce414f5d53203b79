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

The hot metrics (every frame in and out, every action, every request, every room's change of
state) cost no Prometheus work on the path (issue 21): they are plain numbers (:class:`Tally`,
:class:`Tallies`, :class:`Level`, :class:`Spread`) that the event loop adds to without a lock
(the server touches its metrics from its event loop's thread only) and a collector reads at each
scrape; a labelled child is looked up in a dict, not through the client library's ``labels``.
The rest (gauges, rare counters) are the client library's own, with their labelled children
bound once (:class:`Bound`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final, Generic, TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

_go_float: Final[Callable[[float], str]] = floatToGoString
"""A bucket bound as the client library writes it (``0.0001``, ``64.0``, ``+Inf``)."""

LAG_PROBE_SECONDS = 0.1
"""How often the event-loop lag is probed (:meth:`server.app.App._lag_probe`)."""


class Tally:
    """One counter's value: a plain number, added to without a lock."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class Tallies:
    """A Prometheus counter (``name`` ends in ``_total``) with or without one label, kept as
    :class:`Tally` children and exposed at each scrape (registered in ``registry``)."""

    def __init__(
        self, name: str, documentation: str, label: str | None, registry: CollectorRegistry
    ) -> None:
        self.name = name.removesuffix("_total")
        self.documentation = documentation
        self.label = label
        self.children: dict[str, Tally] = {}
        self._own = Tally()
        registry.register(self)

    def labels(self, value: str) -> Tally:
        child = self.children.get(value)
        if child is None:
            child = self.children[value] = Tally()
        return child

    def inc(self, amount: float = 1.0) -> None:
        self._own.value += amount

    @property
    def value(self) -> float:
        """The unlabelled counter's value."""
        return self._own.value

    def describe(self) -> Iterable[Metric]:
        return [self._family()]

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        if self.label is None:
            family.add_metric([], self._own.value)
        for value, child in list(self.children.items()):
            family.add_metric([value], child.value)
        return [family]

    def _family(self) -> CounterMetricFamily:
        labels = [] if self.label is None else [self.label]
        return CounterMetricFamily(self.name, self.documentation, labels=labels)


class Level:
    """One gauge's value: a plain number, moved without a lock."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dec(self, amount: float = 1.0) -> None:
        self.value -= amount


class Levels:
    """A Prometheus gauge with one label, kept as :class:`Level` children and exposed at each
    scrape (registered in ``registry``): the ``rooms`` gauge, moved at every change of a room's
    state (three a match), where the client library's ``inc`` and ``dec`` ran its interpreted
    code and took its lock."""

    def __init__(
        self, name: str, documentation: str, label: str, registry: CollectorRegistry
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self.children: dict[str, Level] = {}
        registry.register(self)

    def labels(self, value: str) -> Level:
        child = self.children.get(value)
        if child is None:
            child = self.children[value] = Level()
        return child

    def describe(self) -> Iterable[Metric]:
        return [self._family()]

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        for value, child in list(self.children.items()):
            family.add_metric([value], child.value)
        return [family]

    def _family(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(self.name, self.documentation, labels=[self.label])


class Spread:
    """One histogram's buckets, count and sum: plain numbers (``observe`` finds the bucket and
    makes two additions)."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, amount: float) -> None:
        """Count ``amount`` in the first bucket whose bound is not below it (``bisect_left``'s
        index), found by walking the dozen bounds: compiled, a walk over unboxed floats costs
        a fraction of a call to ``bisect_left``, which compares boxed ones (three of these per
        choice: its time, its patch's size, its request's time)."""
        index = 0
        for bound in self.bounds:
            if not bound < amount:
                break
            index += 1
        self.counts[index] += 1
        self.total += amount


class Spreads:
    """A Prometheus histogram with or without one label, kept as :class:`Spread` children and
    exposed at each scrape (bucket bounds are upper bounds, inclusive, as Prometheus's)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        label: str | None,
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self.bounds = tuple(float(b) for b in buckets)
        self.children: dict[str, Spread] = {}
        self._own = Spread(self.bounds)
        registry.register(self)

    def labels(self, value: str) -> Spread:
        child = self.children.get(value)
        if child is None:
            child = self.children[value] = Spread(self.bounds)
        return child

    def observe(self, amount: float) -> None:
        self._own.observe(amount)

    def describe(self) -> Iterable[Metric]:
        return [self._family()]

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        if self.label is None:
            self._add(family, [], self._own)
        for value, child in list(self.children.items()):
            self._add(family, [value], child)
        return [family]

    def _add(self, family: HistogramMetricFamily, labels: list[str], spread: Spread) -> None:
        seen = 0.0
        buckets: list[tuple[str, float]] = []
        for bound, count in zip((*self.bounds, float("inf")), spread.counts, strict=True):
            seen += count
            buckets.append((_go_float(bound), seen))
        family.add_metric(labels, buckets, spread.total)

    def _family(self) -> HistogramMetricFamily:
        labels = [] if self.label is None else [self.label]
        return HistogramMetricFamily(self.name, self.documentation, labels=labels)


M = TypeVar("M", bound=MetricWrapperBase)


class Bound(Generic[M]):
    """A labelled metric of the client library whose children are looked up once."""

    def __init__(self, metric: M) -> None:
        self.metric: M = metric
        self.children: dict[str, M] = {}

    def labels(self, value: str) -> M:
        child = self.children.get(value)
        if child is None:
            child = self.children[value] = self.metric.labels(value)
        return child


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Gauge("oasis_connections", "Open WebSocket connections", registry=r)
        self.rooms = Levels("oasis_rooms", "Rooms in memory", "state", r)
        self.frames_in = Tallies("oasis_frames_in_total", "Client frames received", "type", r)
        self.frames_out = Tallies("oasis_frames_out_total", "Frames written", None, r)
        self.bytes_out = Tallies("oasis_bytes_out_total", "Bytes of frames written", None, r)
        self.errors = Tallies("oasis_errors_total", "Error frames sent", "code", r)
        self.actions = Tallies("oasis_actions_total", "Choices applied", "game", r)
        self.action_seconds = Spreads(
            "oasis_action_seconds",
            "From a choice entering its room to the last audience frame written",
            None,
            (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1.0),
            r,
        )
        self.patch_bytes = Spreads(
            "oasis_patch_bytes",
            "Size of one audience's patch frame",
            None,
            (64, 128, 256, 512, 1024, 4096, 16384, 65536),
            r,
        )
        self.room_failures = Tallies(
            "oasis_room_failures_total",
            "Room tasks that failed (a bug), by what became of the room: restored or closed",
            "outcome",
            r,
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
        self.refused = Tallies(
            "oasis_refused_total", "Requests refused by a quota or budget", "limit", r
        )
        self.request_seconds = Spreads(
            "oasis_request_seconds",
            "Time the shell spent on one request, per type",
            "type",
            (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25),
            r,
        )
        self.half_open = Gauge(
            "oasis_half_open", "TCP connections still in the WebSocket upgrade", registry=r
        )
        self.spectators = Gauge("oasis_spectators", "Spectators of every room", registry=r)
        self.rejected = Bound(
            Counter(
                "oasis_rejected_connections_total", "Handshakes refused", ["reason"], registry=r
            )
        )

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
