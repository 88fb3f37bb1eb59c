"""JVM options for the short-lived JVMs the suite starts (every Spark driver, the standalone cluster's
master, worker and executors).

A test's JVM lives seconds and runs small jobs: the C2 compiler's threads and G1's parallel GC threads
cost CPU it never earns back. C1 only with the serial collector halves the CPU of a Spark session's
start and first query (about 34 s to 18 s on this project's 2-core machine), which the suite pays
once per worker's session and again for every test that starts a fresh JVM. Nothing a test asserts
depends on the JIT or the collector; users' JVMs keep Java's defaults.
"""

from __future__ import annotations

import os

SHORT_LIVED_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def use_for_spark_submit() -> None:
    """Hand the options to every driver that spark-submit launches from this process or its children
    (PySpark's gateway, ``kcodec pipeline`` run as a command): spark-submit adds ``SPARK_SUBMIT_OPTS`` to
    the driver's command line. A value already set by whoever runs the suite is kept."""
    os.environ.setdefault("SPARK_SUBMIT_OPTS", " ".join(SHORT_LIVED_JVM_OPTIONS))
