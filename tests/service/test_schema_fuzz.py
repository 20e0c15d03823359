"""Property-based: no schema-valid request makes the service fail with a 5xx (schemathesis over the OpenAPI schema)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from tanglerag.service.app import create_app
from tests.service.conftest import make_runtime


@schemathesis.serializer("application/x-ndjson")
def _jsonl(ctx, value) -> bytes:  # the documents body is free text: whatever was generated, as UTF-8
    return str(value).encode("utf-8", errors="replace")


_TMP = Path(tempfile.mkdtemp(prefix="tanglerag-fuzz-"))
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(make_runtime(_TMP)))


@pytest.fixture(scope="module", autouse=True)
def _cleanup():
    yield
    shutil.rmtree(_TMP, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_on_any_schema_valid_request(case):
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text}"
