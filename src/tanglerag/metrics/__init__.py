"""Metric registry: per-question scores, averaged by the eval runner."""

from tanglerag.metrics.registry import METRICS, Metric, compute, register

__all__ = ["METRICS", "Metric", "compute", "register"]
