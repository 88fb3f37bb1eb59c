"""Build the optional compiled kernel and the Spark start-up file; everything else is in pyproject.toml.

The kernel is one translation unit: generated/_ckernel.c, printed from the schemas, includes the
hand-written C of csrc/ (hence the include path; `depends` rebuilds it when a csrc/ file changes and
puts csrc/ in the sdist). Where no compiler exists the build is skipped and kcodec uses its
pure-Python decoders (see kcodec.runtime.kernel).
"""

import os
from ctypes.util import find_library
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 64 (PEP 660); the build requires 77
    from setuptools.command.editable_wheel import editable_wheel
except ImportError:  # pragma: no cover
    editable_wheel = None

# zlib's CRC-32 (v0/v1 messages) is several times faster than the kernel's table; the kernel uses it when
# zlib.h is found at compile time, its own table otherwise
ZLIB = ["z"] if find_library("z") else []

# kcodec-spark.pth, installed beside the packages: Python runs its import line at start-up, which waits
# for PySpark's reader and writer modules and gives them kcodec's driver hooks (save modes, option checks)
# when a session found kafka-segments with no register() call (src/spark_plugin/pyspark_kafka_segments).
PTH = "kcodec-spark.pth"
PTH_IMPORT = "import pyspark_kafka_segments.startup\n"
PLUGIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "spark_plugin")


class BuildPyWithPth(build_py):
    """A wheel: the .pth file at the top of the wheel, so it lands in site-packages."""

    def run(self):
        super().run()
        with open(os.path.join(self.build_lib, PTH), "w") as f:
            f.write(PTH_IMPORT)

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


cmdclass = {"build_py": BuildPyWithPth}

if editable_wheel is not None:

    class EditableWheelWithPth(editable_wheel):
        """An editable install maps kcodec's packages through an import hook that PySpark's data source
        lookup (pkgutil.iter_modules) cannot see; its .pth adds src/spark_plugin, which holds only
        pyspark_kafka_segments, to sys.path, then runs the same import line as a wheel's."""

        def _select_strategy(self, name, tag, build_lib):
            return _WithPth(super()._select_strategy(name, tag, build_lib))

    class _WithPth:
        def __init__(self, strategy):
            self.strategy = strategy

        def __call__(self, wheel, files, mapping):
            self.strategy(wheel, files, mapping)
            wheel.writestr(PTH, (PLUGIN_DIR + "\n" + PTH_IMPORT).encode())

        def __enter__(self):
            self.strategy.__enter__()
            return self

        def __exit__(self, *exc):
            return self.strategy.__exit__(*exc)

    cmdclass["editable_wheel"] = EditableWheelWithPth

setup(
    cmdclass=cmdclass,
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
