"""The test client: pytest-lsp's, set up as an editor's would be."""

from __future__ import annotations

from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from smartctx.lsp.json_converter import json_converter


def make_client() -> LanguageClient:
    """pytest-lsp's client, reading custom results and notifications as plain JSON like an editor does."""
    client = LanguageClient(converter_factory=json_converter)
    register_lsp_features(client)
    return client
