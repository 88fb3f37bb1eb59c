"""Choosing a compiled kernel or the pure-Python decoders.

``KCODEC_BACKEND`` selects: ``auto`` (default: the compiled kernel when it was
built and matches the generated code, else Python), ``c`` (the kernel, or an
BackendError, an ImportError, saying why not), ``python`` (never the kernel).

The runtime does not know which kernel: the generated package asks for its own
(``kcodec.generated.fast.kernel``), naming the module and the schema digest it
was generated from.
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from types import ModuleType

from kcodec.errors import BackendError


def backend_setting() -> str:
    value = os.environ.get("KCODEC_BACKEND", "auto").strip().lower() or "auto"
    if value not in ("auto", "c", "python"):
        raise BackendError(f"KCODEC_BACKEND={value!r} is not a backend: use auto, c or python")
    return value


@cache
def select_kernel(module: str, schema_sha256: str, csrc_sha256: str | None = None) -> ModuleType | None:
    """The compiled kernel ``module`` when KCODEC_BACKEND allows it and it was built from the schemas
    with digest ``schema_sha256`` (and, when given, from the hand-written C of csrc/ with digest
    ``csrc_sha256``); None when the Python decoders are to be used."""
    setting = backend_setting()
    if setting == "python":
        return None
    try:
        kernel = importlib.import_module(module)
    except ImportError as exc:
        if setting == "c":
            raise BackendError(
                f"KCODEC_BACKEND=c but the compiled kernel is not available ({exc}); "
                "reinstall kcodec where a C compiler exists"
            ) from None
        return None
    if kernel.SCHEMA_SHA256 != schema_sha256:
        if setting == "c":
            raise BackendError(
                "KCODEC_BACKEND=c but the compiled kernel was built from other schemas; rebuild it (pip install again)"
            )
        return None  # stale build: the Python decoders are always right
    if csrc_sha256 is not None and getattr(kernel, "CSRC_SHA256", None) != csrc_sha256:
        if setting == "c":
            raise BackendError(
                "KCODEC_BACKEND=c but the compiled kernel was built from other C sources (csrc/); "
                "rebuild it (pip install again)"
            )
        return None
    return kernel
