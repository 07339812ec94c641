"""Bundled examples: small functions that `s2sad demo` differentiates."""
