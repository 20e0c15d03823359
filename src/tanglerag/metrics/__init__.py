"""Metric registry: per-question scores, averaged by the eval runner."""

from tanglerag.metrics import ambig, conflict, long_answer  # noqa: F401  (register ans, ent, ear, d_f1;

# ramdocs_strict, answer_recall, misinfo_leak, noise_cited; rouge_l, dr, mrecall@k)
from tanglerag.metrics.registry import METRICS, READER_METRICS, Metric, Reader, compute

__all__ = ["METRICS", "READER_METRICS", "Metric", "Reader", "compute"]
