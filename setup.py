"""Build the optional compiled kernel; everything else is in pyproject.toml.

The kernel is one translation unit: generated/_ckernel.c, printed from the schemas, includes the
hand-written C of csrc/ (hence the include path; `depends` rebuilds it when a csrc/ file changes and
puts csrc/ in the sdist). Where no compiler exists the build is skipped and kcodec uses its
pure-Python decoders (see kcodec.runtime.kernel).
"""

from ctypes.util import find_library
from glob import glob

from setuptools import Extension, setup

# zlib's CRC-32 (v0/v1 messages) is several times faster than the kernel's table; the kernel uses it when
# zlib.h is found at compile time, its own table otherwise
ZLIB = ["z"] if find_library("z") else []

setup(
    ext_modules=[
        Extension(
            "kcodec.generated._ckernel",
            ["generated/_ckernel.c"],
            include_dirs=["csrc"],
            depends=sorted(glob("csrc/*.[ch]")),
            optional=True,
            extra_compile_args=["-O2"],
            libraries=ZLIB,
        ),
    ],
)
