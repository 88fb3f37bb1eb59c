"""Choosing the compiled kernel or the pure-Python decoders.

``KCODEC_BACKEND`` selects: ``auto`` (default: the compiled kernel when it was
built and matches the generated code, else Python), ``c`` (the kernel, or an
ImportError saying why not), ``python`` (never the kernel).
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType

_UNSET = object()
_cached: object = _UNSET


def backend_setting() -> str:
    value = os.environ.get("KCODEC_BACKEND", "auto").strip().lower() or "auto"
    if value not in ("auto", "c", "python"):
        raise ImportError(f"KCODEC_BACKEND={value!r}: use auto, c or python")
    return value


def compiled_kernel() -> ModuleType | None:
    """The compiled kernel module, or None when Python decoders are to be used."""
    global _cached
    if _cached is not _UNSET:
        return _cached  # type: ignore[return-value]
    setting = backend_setting()
    kernel = None
    if setting != "python":
        try:
            kernel = importlib.import_module("kcodec.generated._ckernel")
        except ImportError as exc:
            if setting == "c":
                raise ImportError(f"KCODEC_BACKEND=c but the compiled kernel is not available ({exc}); "
                                  "reinstall kcodec where a C compiler exists") from None
        else:
            from kcodec.generated import SCHEMA_SHA256

            if kernel.SCHEMA_SHA256 != SCHEMA_SHA256:
                if setting == "c":
                    raise ImportError("KCODEC_BACKEND=c but the compiled kernel was built from other schemas; "
                                      "rebuild it (pip install again)")
                kernel = None  # stale build: the Python decoders are always right
    _cached = kernel
    return kernel


def active_backend() -> str:
    return "c" if compiled_kernel() is not None else "python"
