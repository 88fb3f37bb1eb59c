"""A SparkSession fit for kcodec: loopback only, no UI, workers on this interpreter.

By default Spark binds the machine's outside address and serves a UI on every
interface, and its Python workers run ``python3`` from PATH (which may not
have kcodec). This sets ``SPARK_LOCAL_IP=127.0.0.1`` and the driver's host and
bind address to 127.0.0.1, turns the UI off, points ``PYSPARK_PYTHON`` at the
running interpreter (unless it is set already), uses UTC as the session time
zone, and registers the ``kafka-segments`` data source. A standalone master on
the loopback address (``spark://127.0.0.1:7077``) is a cluster on this machine,
so it gets the same settings: its executors can only reach a driver there, and
they share this interpreter's environment.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

__all__ = ["local_session", "on_this_machine", "LOOPBACK_CONF", "JavaMissingError"]

JAVA_HINT = (
    "Spark needs Java 17 or later: install a JDK (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME"
)


class JavaMissingError(RuntimeError):
    """No Java for Spark to start: said before PySpark fails with JAVA_GATEWAY_EXITED."""


def _check_java() -> None:
    """Spark's launcher runs $JAVA_HOME/bin/java when JAVA_HOME is set, else java from PATH."""
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return  # a JVM is running already
    home = os.environ.get("JAVA_HOME")
    if home:
        if not os.access(os.path.join(home, "bin", "java"), os.X_OK):
            raise JavaMissingError(f"JAVA_HOME={home} holds no bin/java; {JAVA_HINT}")
    elif shutil.which("java") is None:
        raise JavaMissingError(f"no java on PATH and JAVA_HOME is not set; {JAVA_HINT}")


LOOPBACK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
}


_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def on_this_machine(master: str) -> bool:
    """``local``, ``local[N]``, or a standalone master on the loopback address."""
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = master[len("spark://") :].split(",")  # spark://h1:7077,h2:7077 (standby masters)
    return all(h.rsplit(":", 1)[0] in _LOOPBACK_HOSTS for h in hosts)


def local_session(
    master: str = "local[*]", app_name: str = "kcodec", conf: dict | None = None, log_level: str = "error"
):
    """Start (or get) a SparkSession on ``master`` with kcodec's settings (the
    loopback and interpreter settings only for a master on this machine);
    ``conf`` adds or overrides Spark settings; ``log_level`` is the JVM's
    (``error`` by default, ``off`` for a command whose errors kcodec reports)."""
    local = on_this_machine(master)
    if local:  # a cluster master keeps its own addresses and Python
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        _check_java()
    base = LOOPBACK_CONF if local else {k: v for k, v in LOOPBACK_CONF.items() if "driver" not in k}
    settings = {**base, **(conf or {})}
    if "spark.driver.extraJavaOptions" not in settings and not os.environ.get("SPARK_CONF_DIR"):
        # Quiet JVM start: errors only, instead of Spark's default INFO/WARN console profile.
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{_quiet_log4j(log_level)}"
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level.upper())
    from kcodec.spark.source import register

    register(spark)
    return spark


_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = {level}
"""
# PySpark's gateway starts Spark's logging as an interpreter's, whose level is its own logger's when set
# and WARN otherwise; at the root's level, Spark prints no 'Setting default log level to "WARN"' lines.


def _quiet_log4j(level: str) -> str:
    text = _LOG4J.replace("{level}", level.lower())
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(tempfile.gettempdir(), f"kcodec-spark-log4j2-{uid}-{level.lower()}.properties")
    try:
        with open(path) as f:
            if f.read() == text:
                return path
    except OSError:
        pass
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
