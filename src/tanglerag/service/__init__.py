"""``tanglerag serve``: the HTTP API and the web inspector over one warmed runtime.

>>> from tanglerag.service.app import create_app  # doctest: +SKIP
>>> app = create_app(Runtime(settings, index_dir=Path("my-index")))  # doctest: +SKIP
"""
