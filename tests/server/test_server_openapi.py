"""The OpenAPI document against the running server, with schemathesis: every answer it can
give is documented (status, content type, headers, body schema), bodies it documents as wrong
are refused with a 4xx, and nothing answers 5xx. Bounded: a few examples an operation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from server_support import live_server

from nertz.server.edge.app import create_app

SCHEMA = schemathesis.openapi.from_dict(create_app("sqlite://").openapi())

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance, negative_data_rejection]
"""Not ``positive_data_acceptance``: a body of the right shape may still be refused for what
no schema says (an unknown option, a name in use, a room that does not exist)."""


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db: Path = tmp_path_factory.mktemp("openapi") / "nertz.db"
    with live_server(create_app(f"sqlite:///{db}", rooms_per_minute=0)) as base:
        yield base


def test_the_document_is_complete() -> None:
    paths = create_app("sqlite://").openapi()["paths"]
    create = paths["/api/rooms"]["post"]
    assert "requestBody" in create and {"201", "400", "413", "429"} <= set(create["responses"])
    join = paths["/api/rooms/{key}/join"]["post"]
    assert "requestBody" in join and {"200", "403", "404", "409"} <= set(join["responses"])
    assert "/api/matches/{match_id}/frames" in paths and "/api/replays/frames" in paths
    assert "/" not in paths  # the page is not API


@SCHEMA.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck),
          database=None)
def test_the_server_answers_as_documented(case: schemathesis.Case, base_url: str) -> None:
    case.call_and_validate(base_url=base_url, checks=CHECKS)
