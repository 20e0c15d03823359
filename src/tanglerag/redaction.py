"""The one rule for what leaves the process: no credential in a URL.

A URL may carry a secret: ``https://user:password@host/v1``, or ``?api_key=...`` / ``?sig=...`` (a signed URL, an
Azure SAS, a proxy's token). Log lines, OpenTelemetry spans and error messages leave the process (a log file, a
tracing backend, a terminal pasted into an issue), so what writes one passes its text through
``without_credentials``: every URL in it keeps its scheme, host, port, path and fragment, which tell which server it
is, and loses its user info and its whole query. The whole query rather than the parameters that look secret: a
secret goes by any name (``code``, ``sv``, ``x-goog-api-key``), and a base URL's query is rarely what tells two
servers apart. The service's ``Redactor`` goes further for its callers and drops every URL (``URL`` is its pattern).

``without_credentials("at https://u:pw@llm.example/v1?key=k#gpt-4o")`` is ``"at https://***@llm.example/v1?***#gpt-4o"``.
"""

from __future__ import annotations

import re

URL = r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+"
"""A URL in running text: a scheme, ``://``, and up to a space, a quote or an angle bracket."""

_PARTS = re.compile(r"\b(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<authority>[^/?#\s'\"<>]*)(?P<rest>[^\s'\"<>]*)")


def without_credentials(text: str) -> str:
    """``text`` with each URL's user info shown as ``***@`` and its query as ``?***``."""
    return _PARTS.sub(_hidden, text)


def _hidden(url: re.Match[str]) -> str:
    authority = url["authority"]
    host = ("***@" if "@" in authority else "") + authority.rpartition("@")[2]  # a password may hold an "@"
    address, hash_mark, fragment = url["rest"].partition("#")
    path, question_mark, query = address.partition("?")
    return url["scheme"] + host + path + ("?***" if query else question_mark) + hash_mark + fragment
