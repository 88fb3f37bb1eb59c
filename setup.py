"""Build the optional compiled kernel; everything else is in pyproject.toml.

The kernel's C source is generated from the schemas (generated/_ckernel.c).
Where no compiler exists the build is skipped and kcodec uses its
pure-Python decoders (see kcodec.runtime.kernel).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("kcodec.generated._ckernel", ["generated/_ckernel.c"], optional=True, extra_compile_args=["-O2"]),
    ],
)
