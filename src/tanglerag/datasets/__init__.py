"""Evaluation datasets: loaders per format, a registry of names, format detection."""

from tanglerag.datasets.base import QAExample
from tanglerag.datasets.registry import load_dataset
from tanglerag.errors import DatasetError

__all__ = ["DatasetError", "QAExample", "load_dataset"]
