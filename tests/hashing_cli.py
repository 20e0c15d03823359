"""The real ``tanglerag`` command line in a real process, on the hashing embedder instead of MiniLM: for the
real-process tests whose case is not the model (crash safety, metadata, sync, ids, Ctrl-C, resume checks). The
process never imports torch, so a command starts in about a second instead of loading the model; everything else
(Typer, the index, the stores, the LLM client, signals, exit codes) is the product's own.

>>> subprocess.run([*HASHING_CLI, "index", "corpus.jsonl", "--out", "idx"])  # doctest: +SKIP

Its indexes are embedded by ``tanglerag.testing.HashEmbedder`` and say so (``embedding_model: hash-64``): a real
``tanglerag`` refuses to read them, and they are interchangeable with the ones a test builds in-process with
``HashEmbedder()``. The real model's path stays covered by the tests that load it (``tests/cli/test_commands.py``,
``tests/integration``).
"""

from __future__ import annotations

import sys

from tanglerag.config import EmbeddingConfig
from tanglerag.testing import HashEmbedder

HASHING_CLI = [sys.executable, "-c", f"import runpy; runpy.run_path({__file__!r}, run_name='__main__')"]
"""The command line that starts this module as ``tanglerag``: arguments follow it as they would follow ``tanglerag``.
(``-c`` rather than the file's path: run as a script, ``tests/`` would come first on ``sys.path`` and its packages
``datasets``, ``eval`` and ``index`` would hide the installed ones of those names.)"""


class HashingEmbedder(HashEmbedder):
    """``tanglerag.embeddings.Embedder``'s constructor with the hashing embedder's vectors (the configuration's
    model name, device and batch size are not used)."""

    def __init__(self, config: EmbeddingConfig | None = None) -> None:
        super().__init__()


def use_hashing() -> None:
    """Put ``HashingEmbedder`` in place of ``Embedder`` in ``tanglerag.embeddings`` and in every ``tanglerag``
    module imported so far that took it by name (the runtime, ``cli/index.py``, ``methods/base.py``); a module
    imported later takes the replacement from ``tanglerag.embeddings``."""
    import tanglerag.cli  # noqa: F401  (every command's modules, so that each by-name import is there to replace)
    import tanglerag.embeddings

    real = tanglerag.embeddings.Embedder
    for name, module in list(sys.modules.items()):
        if (name == "tanglerag" or name.startswith("tanglerag.")) and getattr(module, "Embedder", None) is real:
            module.Embedder = HashingEmbedder  # type: ignore[attr-defined]


def main() -> None:
    """``tanglerag`` with the arguments this process got."""
    from tanglerag.cli import app

    use_hashing()
    sys.argv = ["tanglerag", *sys.argv[1:]]
    app()


if __name__ == "__main__":
    main()
