"""Call the timed body through a C function so callgrind can count only the body.

Python functions are invisible to valgrind (all of them run inside the same eval loop), but a
ctypes callback runs inside libffi's `ffi_call`. With
``valgrind --tool=callgrind --collect-atstart=no --toggle-collect='ffi_call*'`` the counts cover
exactly the body (plus a constant few hundred instructions of call overhead). Neither the
drivers nor unixODBC use libffi, so nothing inside the body toggles collection back off.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

# PYFUNCTYPE keeps the GIL held across the call (CFUNCTYPE would release and re-take it).
_PROTO = ctypes.PYFUNCTYPE(ctypes.py_object)


def call_via_ffi(body: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def thunk() -> None:
        # Exceptions cannot cross the C boundary: carry them out in the box.
        try:
            box["result"] = body()
        except BaseException as e:  # noqa: BLE001  (re-raised by the caller, below)
            box["error"] = e
        return None

    _PROTO(thunk)()
    if "error" in box:
        raise box["error"]
    return box.get("result")
