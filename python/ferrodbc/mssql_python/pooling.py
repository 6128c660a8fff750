"""mssql-python's ``pooling(max_size, idle_timeout, enabled)`` function and ``PoolingManager``
over ferrodbc's pool (on by default, as in mssql-python). ferrodbc's pool keeps idle sessions
per connection string and resets them on reuse; ``max_size`` and ``idle_timeout`` are checked
and kept for ``PoolingManager.get_config()`` (the engine's own limits apply)."""

from __future__ import annotations

import threading
from typing import Any

import ferrodbc


class PoolingManager:
    _lock = threading.Lock()
    _config: dict[str, Any] = {"max_size": 100, "idle_timeout": 600}
    _initialized = False

    @classmethod
    def enable(cls, max_size: int = 100, idle_timeout: int = 600) -> None:
        if not isinstance(max_size, int) or max_size <= 0:
            raise ValueError("max_size must be a positive integer")
        if not isinstance(idle_timeout, int) or idle_timeout < 0:
            raise ValueError("idle_timeout must be a non-negative integer")
        with cls._lock:
            cls._config = {"max_size": max_size, "idle_timeout": idle_timeout}
            cls._initialized = True
            ferrodbc.pooling = True

    @classmethod
    def disable(cls) -> None:
        with cls._lock:
            cls._initialized = True
            ferrodbc.pooling = False
            ferrodbc.clear_pool()

    @classmethod
    def is_enabled(cls) -> bool:
        return bool(getattr(ferrodbc, "pooling", True))

    @classmethod
    def is_initialized(cls) -> bool:
        return cls._initialized

    @classmethod
    def get_config(cls) -> dict[str, Any]:
        return dict(cls._config, enabled=cls.is_enabled())


def pooling(max_size: int = 100, idle_timeout: int = 600, enabled: bool = True) -> None:
    """Turn ferrodbc's pool on (with mssql-python's limits) or off."""
    if enabled:
        PoolingManager.enable(max_size, idle_timeout)
    else:
        PoolingManager.disable()


__all__ = ["PoolingManager", "pooling"]
