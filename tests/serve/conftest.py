"""Fixtures of the browser-server tests: an app on a fresh corpus of its own per test (games are
logged under the session's NLMCS_DATA, see tests/conftest.py), driven through Starlette's
TestClient."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def make_client():
    """`make_client(**ServeConfig fields)` -> a started TestClient (closed, and so shut down
    with its ingest, at the end of the test unless the test closes it first)."""
    from starlette.testclient import TestClient

    from nlmcs.serve.app import create_app
    from nlmcs.serve.config import ServeConfig

    clients = []

    def make(**fields):
        fields.setdefault("corpus", f"serve-{uuid.uuid4().hex[:10]}")
        fields.setdefault("map", "tiny")
        client = TestClient(create_app(ServeConfig(**fields), allowed_hosts=("testserver",)))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client):
    return make_client()
