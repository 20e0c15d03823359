"""bm25s is imported on first use; its import must not turn the CLI's log level for it back to DEBUG."""

import logging
import sys

from tanglerag.index.sparse import import_bm25s


def test_importing_bm25s_keeps_the_log_level_set_before(monkeypatch):
    logger = logging.getLogger("bm25s")
    monkeypatch.setattr(logger, "level", logging.WARNING)
    import_bm25s()
    monkeypatch.delitem(sys.modules, "bm25s")  # its __init__ runs again, as the first import in a CLI process does
    import_bm25s()
    assert logger.level == logging.WARNING
