"""API keys: who is calling, and whose contexts they may touch.

Keys come from ``TANGLERAG_API_KEYS`` (comma-separated) and/or a key file (one per line). An entry
``KEY`` is an admin key; ``KEY=USER`` (env) or ``KEY USER`` (file) may act only as USER. Keys are
compared in constant time. With no key configured every caller is an admin, which is why ``serve``
then binds to loopback only.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from tanglerag.errors import ConfigError, ContextStoreError
from tanglerag.users import check_user_id

ENV_VAR = "TANGLERAG_API_KEYS"


@dataclass(frozen=True)
class Caller:
    """An authenticated caller: an admin, or a key bound to one user."""

    user: str | None  # None: admin

    @property
    def admin(self) -> bool:
        return self.user is None

    def may_act_as(self, user: str) -> bool:
        return self.user is None or hmac.compare_digest(self.user.encode(), user.encode())


class ApiKeys:
    def __init__(self, entries: dict[str, str | None]) -> None:
        self._entries = [(key.encode(), user) for key, user in entries.items()]

    @property
    def enabled(self) -> bool:
        return bool(self._entries)

    @classmethod
    def load(cls, key_file: Path | None = None, env: str | None = None) -> ApiKeys:
        entries: dict[str, str | None] = {}
        raw_env = os.environ.get(ENV_VAR, "") if env is None else env
        for item in (part.strip() for part in raw_env.split(",")):
            if item:
                key, is_bound, user = item.partition("=")
                if is_bound and not user.strip():  # 'KEY=' must not quietly become an admin key
                    raise ConfigError(f"{ENV_VAR}: a key ends in '=' with no user; write KEY for an admin key or "
                                      "KEY=USER for one user's key")
                entries[_checked(key.strip(), ENV_VAR)] = _user(user.strip(), ENV_VAR) if is_bound else None
        if key_file is not None:
            try:
                lines = key_file.read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise ConfigError(f"cannot read API key file {key_file}: {exc.strerror}") from exc
            for n, line in enumerate(lines, 1):
                fields = line.split("#", 1)[0].split()
                if not fields:
                    continue
                if len(fields) > 2:
                    raise ConfigError(f"{key_file}:{n}: expected 'KEY' or 'KEY USER'")
                entries[_checked(fields[0], f"{key_file}:{n}")] = (_user(fields[1], f"{key_file}:{n}")
                                                                   if len(fields) == 2 else None)
        return cls(entries)

    def identify(self, authorization: str | None) -> Caller | None:
        """The caller for an ``Authorization`` header value, or None when it carries no valid key."""
        if not self.enabled:
            return Caller(user=None)
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        given = token.strip().encode()
        found: Caller | None = None
        for key, user in self._entries:  # every key is compared, so timing says nothing about which matched
            if hmac.compare_digest(key, given):
                found = Caller(user=user)
        return found


def _user(user: str, where: str) -> str:
    try:
        return check_user_id(user)
    except ContextStoreError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _checked(key: str, where: str) -> str:
    if len(key) < 16:
        raise ConfigError(f"API key in {where} is shorter than 16 characters: use a long random key")
    return key


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
