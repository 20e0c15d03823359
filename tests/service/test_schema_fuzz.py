"""Property-based: every response keeps the OpenAPI contract (schemathesis, every check it has).

The app runs with API keys, so the checks that requests without a key are refused (401) and that the documented
bearer scheme is enforced run too; generated requests carry the admin key.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st
from schemathesis.checks import positive_data_acceptance
from schemathesis.core.parameters import ParameterLocation

from tanglerag.service.app import create_app
from tanglerag.service.auth import ApiKeys
from tests.eval.run_folders import write_run
from tests.service.conftest import ADMIN, ALICE, bearer, make_runtime


def _where_condition(field: str) -> st.SearchStrategy[str]:
    values = {"date": st.dates().map(str) | st.integers(1000, 9999).map(str), "authority": st.sampled_from(
              ["0", "-1.5", "official", "News"]), "source": st.from_regex(r"[a-z]{1,8}\.org", fullmatch=True),
              "meta.lang": st.sampled_from(["fr", "'Le Monde'", '"x y"', "3"])}[field]
    single = st.tuples(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), values).map(" ".join)
    listed = st.lists(values, min_size=1, max_size=3).map(lambda vs: f"in ({', '.join(vs)})")
    return (single | listed).map(lambda rest: f"{field} {rest}")


# retrieval.where is text in a small language (format tanglerag-where): what a client may send is a filter it reads
schemathesis.openapi.format("tanglerag-where", st.just("") | st.lists(
    st.sampled_from(["date", "source", "authority", "meta.lang"]).flatmap(_where_condition), min_size=1,
    max_size=3).map(" and ".join))


@schemathesis.serializer("application/x-ndjson")
def _jsonl(ctx, value) -> bytes:  # the documents body is free text: whatever was generated, as UTF-8
    return str(value).encode("utf-8", errors="replace")


# JSONL text and uploaded files are free-form in the schema (JSON Schema cannot say "one JSON object per line"), so
# a schema-valid body may still be refused with 400; every other check applies to that route too
_FREE_FORM_BODIES = {("POST", "/v1/index/documents")}


@pytest.fixture(scope="module")
def api_schema():
    """The app's schema, loaded when the test runs rather than when it is collected: schemathesis builds each
    operation's coverage cases as it loads them (14 s here), and every test process collects every test, so at
    collection each would pay that, where now the one process running this test does."""
    folder = Path(tempfile.mkdtemp(prefix="tanglerag-fuzz-"))
    runs = write_run(folder / "runs" / "sample")  # the run browser's routes answer from a real run
    keys = ApiKeys.load(env=f"{ADMIN},{ALICE}=alice")
    yield schemathesis.openapi.from_asgi("/openapi.json", create_app(make_runtime(folder), keys, runs_dir=runs.parent))
    shutil.rmtree(folder, ignore_errors=True)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_response_keeps_the_contract(case):
    free_form = (case.method.upper(), case.path) in _FREE_FORM_BODIES
    # a case that breaks the headers on purpose (drops the required Authorization) is left out: the admin key sent
    # with every request would make it valid, and the negative-data check would then expect it to be refused (the
    # checks without a key, and with a wrong one, run through schemathesis' own auth checks)
    assume(case.meta is None or not case.meta.is_negative_at(ParameterLocation.HEADER))
    case.call_and_validate(headers=bearer(ADMIN), excluded_checks=[positive_data_acceptance] if free_form else None)
