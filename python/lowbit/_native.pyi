"""The Rust extension (python/src/lib.rs); its functions are internal, called by lowbit/__init__.py."""

from typing import Any

__version__: str

def __getattr__(name: str) -> Any: ...
