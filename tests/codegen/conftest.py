"""Fixtures of the code-generation and disk-cache tests."""

from tests.codegen.cache_setup import cache_dir  # noqa: F401 - a fixture, found by name
