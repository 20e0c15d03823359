"""``python -m tanglerag.cli``."""

from tanglerag.cli import app

app()
