"""Build the optional compiled kernel; everything else is in pyproject.toml.

The kernel's C source is generated from the schemas (generated/_ckernel.c).
Where no compiler exists the build is skipped and kcodec uses its
pure-Python decoders (see kcodec.runtime.kernel).
"""

from ctypes.util import find_library

from setuptools import Extension, setup

# zlib's CRC-32 (v0/v1 messages) is several times faster than the kernel's table; the kernel uses it when
# zlib.h is found at compile time, its own table otherwise
ZLIB = ["z"] if find_library("z") else []

setup(
    ext_modules=[
        Extension(
            "kcodec.generated._ckernel",
            ["generated/_ckernel.c"],
            optional=True,
            extra_compile_args=["-O2"],
            libraries=ZLIB,
        ),
    ],
)
