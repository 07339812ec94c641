"""Stored derivatives: the disk cache and ahead-of-time modules, and the lookup that
serves a compiled derivative from them or from the compiler."""
