"""Prometheus metrics of one service instance (its own registry: two apps in a process never mix)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from tanglerag.types import Usage

LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


class Telemetry:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("tanglerag_requests", "HTTP requests by route and status",
                                ["route", "status"], registry=self.registry)
        self.latency = Histogram("tanglerag_request_seconds", "HTTP request latency by route", ["route"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.llm_calls = Counter("tanglerag_llm_calls", "LLM completions made (not from the cache)",
                                 registry=self.registry)
        self.cache_hits = Counter("tanglerag_llm_cache_hits", "LLM completions served from the cache",
                                  registry=self.registry)
        self.tokens = Counter("tanglerag_llm_tokens", "LLM tokens by kind", ["kind"], registry=self.registry)
        self.rejected = Counter("tanglerag_rejected", "questions turned away (429) because the queue was full",
                                registry=self.registry)
        self.abandoned = Counter("tanglerag_abandoned_questions", "questions whose client left or timed out "
                                 "(stopped before their next LLM call)", registry=self.registry)
        self.abandoned_calls = Counter("tanglerag_abandoned_llm_calls", "LLM calls made for abandoned questions "
                                       "(also in tanglerag_llm_calls)", registry=self.registry)
        self.in_flight = Gauge("tanglerag_questions_running", "questions being answered now", registry=self.registry)

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        self.requests.labels(route=route, status=str(status)).inc()
        self.latency.labels(route=route).observe(seconds)

    def observe_usage(self, usage: Usage) -> None:
        summary = usage.totals()
        self.llm_calls.inc(summary["llm_calls"])
        self.cache_hits.inc(summary["cached_calls"])
        self.tokens.labels(kind="prompt").inc(summary["prompt_tokens"])
        self.tokens.labels(kind="completion").inc(summary["completion_tokens"])

    def observe_abandoned(self, usage: Usage) -> None:
        """A question nobody will read: its calls and tokens still cost, so they are counted."""
        self.abandoned.inc()
        self.abandoned_calls.inc(usage.totals()["llm_calls"])
        self.observe_usage(usage)

    def render(self) -> bytes:
        return generate_latest(self.registry)
