"""The data source's options: one table (:data:`OPTIONS`) of every name the reader, a stream and the
writer accept or refuse, with its kind, default and meaning, from which the names checks, the
defaults, the parsing (:func:`value`) and a listing (:func:`describe`) come; the parsers of values as
Spark passes them (a case-insensitive string map): booleans, integers with a floor, fractions, one of a
few words, timestamps, and Spark's Kafka source values (per-partition offset JSON, ``assign``,
``subscribe``, ``subscribePattern``); and :class:`ReadOptions`, a read's options parsed."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from kcodec.errors import KcodecError
from kcodec.log.fs import STORAGE_OPTIONS, Storage, storage_options
from kcodec.log.index import DEFAULT_INDEX_INTERVAL_BYTES
from kcodec.log.writer import DEFAULT_SEGMENT_BYTES
from kcodec.tools.compact.config import CleanerConfig, parse_release

__all__ = [
    "OptionError",
    "bool_option",
    "int_option",
    "choice_option",
    "timestamp_option",
    "fraction_option",
    "check_known",
    "partition_map_option",
    "offsets_option",
    "assign_option",
    "topics_option",
    "pattern_option",
    "EARLIEST",
    "LATEST",
    "READ_OPTIONS",
    "check_read_names",
    "check_names",
    "WRITE_OPTIONS",
    "check_write_names",
    "SAVE_MODE_OPTION",
    "SAVE_MODES",
    "CODECS",
    "Option",
    "OPTIONS",
    "READ",
    "STREAM",
    "WRITE",
    "option",
    "default",
    "value",
    "agree",
    "option_names",
    "refused_names",
    "stream_refusal",
    "describe",
    "preferred",
    "as_items",
    "check_offset_pairs",
    "tp_names",
    "view_option",
    "latest_option",
    "cleaner_option",
    "ReadOptions",
    "DEFAULT_SPLIT_BYTES",
]

DEFAULT_SPLIT_BYTES = 128 << 20  # as spark.sql.files.maxPartitionBytes


class OptionError(KcodecError, ValueError):
    """A data source option that is unknown, malformed or not allowed with the others."""

    kind = "option"


def bool_option(options, name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise OptionError(f"option {name} must be true or false, not {raw!r}")


def int_option(options, name: str, default: int | None, minimum: int | None = None) -> int | None:
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise OptionError(f"option {name} must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise OptionError(f"option {name} must be >= {minimum}, not {value}")
    return value


def choice_option(options, name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = options.get(name.lower())
    value = default if raw is None else str(raw).strip().lower()
    if value not in choices:
        raise OptionError(f"option {name} must be one of {', '.join(choices)}, not {raw!r}")
    return value


def timestamp_option(options, name: str) -> int | None:
    """Milliseconds since the epoch, or an ISO-8601 date-time (UTC unless it says otherwise)."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        pass
    from datetime import datetime, timezone

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise OptionError(
            f"option {name} must be milliseconds since the epoch or an ISO-8601 time, not {raw!r}"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


# ----------------------------------------------------------------------------- names


def check_known(options, known: tuple[str, ...], what: str) -> None:
    """Refuse an option name that is not in ``known`` (Spark lowercases names; ``known`` keeps the
    documented spelling), naming the closest known one: a misspelled option must not read as a default."""
    by_lower = {k.lower(): k for k in known}
    for name in options:
        lower = str(name).lower()
        if lower in by_lower:
            continue
        close = difflib.get_close_matches(lower, list(by_lower), n=1, cutoff=0.6)
        hint = f"; did you mean {by_lower[close[0]]}?" if close else ""
        raise OptionError(f"{what}: unknown option {name!r}{hint}")


# ----------------------------------------------------------------------------- Spark's Kafka source vocabulary

#: -2 and -1 in Spark's per-partition offset JSON
EARLIEST, LATEST = -2, -1

TopicPartition = tuple[str, int]


def _json(name: str, raw) -> object:
    try:
        return json.loads(str(raw))
    except ValueError as exc:
        raise OptionError(f'option {name} must be JSON like {{"topic":{{"0":23}}}}, not {raw!r} ({exc})') from None


def partition_map_option(options, name: str) -> dict[TopicPartition, int] | None:
    """Spark's ``{"topic":{"0":23,"1":-2}}`` as ``{(topic, 0): 23, (topic, 1): -2}``."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return None
    value = _json(name, raw)
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise OptionError(f"option {name} must map topics to {{partition: value}} objects, not {raw!r}")
    out: dict[TopicPartition, int] = {}
    for topic, parts in value.items():
        for p, v in parts.items():
            try:
                partition = int(p)
            except ValueError:
                raise OptionError(f"option {name}: partition {p!r} of topic {topic!r} is not an integer") from None
            if isinstance(v, bool) or not isinstance(v, int):
                raise OptionError(f"option {name}: the value for {topic}-{partition} must be an integer, not {v!r}")
            out[(topic, partition)] = v
    return out


def offsets_option(options, name: str, *, starting: bool) -> str | dict[TopicPartition, int] | None:
    """``startingOffsets`` / ``endingOffsets`` of a batch read: ``earliest``, ``latest`` or JSON, with
    Spark's rules (a batch cannot start at latest nor end at earliest)."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return None
    word = str(raw).strip().lower()
    if word in ("earliest", "latest"):
        if word == ("latest" if starting else "earliest"):
            raise OptionError(f"option {name} can't be {word} for batch queries")
        return word
    offsets = partition_map_option(options, name)
    assert offsets is not None
    refused = LATEST if starting else EARLIEST
    for (topic, partition), off in offsets.items():
        if off == refused:
            raise OptionError(
                f"option {name} for {topic}-{partition} can't be {'latest' if starting else 'earliest'} "
                "for batch queries"
            )
        if off < EARLIEST:
            raise OptionError(f"option {name} for {topic}-{partition} must be >= -2, not {off}")
    return offsets


def assign_option(options) -> tuple[TopicPartition, ...] | None:
    """Spark's ``assign``: ``{"topicA":[0,1],"topicB":[2,4]}``."""
    raw = options.get("assign")
    if raw is None:
        return None
    value = _json("assign", raw) if str(raw).strip().startswith("{") else None
    if not isinstance(value, dict) or not all(
        isinstance(ps, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in ps)
        for ps in value.values()
    ):
        raise OptionError(f'option assign must be JSON like {{"topicA":[0,1]}}, not {raw!r}')
    return tuple(sorted((t, p) for t, ps in value.items() for p in ps))


def topics_option(options) -> tuple[str, ...] | None:
    """Spark's ``subscribe``: a comma-separated list of topics."""
    raw = options.get("subscribe")
    if raw is None:
        return None
    topics = tuple(t.strip() for t in str(raw).split(",") if t.strip())
    if not topics:
        raise OptionError(f"option subscribe names no topic: {raw!r}")
    return topics


def pattern_option(options) -> re.Pattern | None:
    """Spark's ``subscribePattern``: a regular expression a whole topic name matches."""
    raw = options.get("subscribepattern")
    if raw is None:
        return None
    text = str(raw).strip()
    if not text:
        raise OptionError("option subscribePattern is empty")
    try:
        return re.compile(text)
    except re.error as exc:
        raise OptionError(f"option subscribePattern is not a regular expression: {text!r} ({exc})") from None


# ----------------------------------------------------------------------------- the option table

#: Where an option applies: a batch read, a stream (``spark.readStream``), a write.
READ, STREAM, WRITE = "read", "stream", "write"
_READING = frozenset({READ, STREAM})
_ALL = frozenset({READ, STREAM, WRITE})
_BATCH = frozenset({READ})
_WRITING = frozenset({WRITE})

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
SAVE_MODES = ("errorifexists", "ignore", "append", "overwrite")
#: How kcodec's DataFrameWriter hook (kcodec.spark.savemode) tells the writer Spark's save mode.
SAVE_MODE_OPTION = "kcodec.saveMode"

_NO_END = "is for batch reads: a stream has no end (as in Spark)"
_NO_MIN = "is not supported by streams (PySpark's read limits carry maxOffsetsPerTrigger alone)"


@dataclass(frozen=True)
class Option:
    """One option of the data source, as documented (Spark passes names lowercased).

    ``kind`` says how :func:`value` parses it: ``bool``, ``int`` (at least ``minimum``), ``fraction``
    (in (0, 1]), ``choice`` (one of ``choices``), ``timestamp`` (ms or ISO-8601), ``text``; ``custom``
    values (Spark's JSON, topic lists, ``view``) have their own parser here; ``ignored`` options are
    accepted with no effect (a job switching from ``format("kafka")`` keeps them); ``refused`` ones
    fail, ``doc`` saying why. ``aliases`` name the same setting (Spark's spelling): both may be given
    if they agree. ``not_in_stream``: why a stream refuses this batch-read option."""

    name: str
    kind: str
    default: Any = None
    doc: str = ""
    applies_to: frozenset[str] = _READING
    aliases: tuple[str, ...] = ()
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    not_in_stream: str = ""
    documented: bool = True  # False: set by kcodec or by load(PATH) / save(PATH), not by users


_CLEANER = CleanerConfig(now_ms=0)  # Kafka's defaults, as the compaction view's option defaults
_CLEANER_OPTIONS = (
    "cleanerTime",
    "release",
    "firstDirtyOffset",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "segment.bytes",
    "segment.index.bytes",
    "min.cleanable.dirty.ratio",
    "producer.id.expiration.ms",
    "log.cleaner.dedupe.buffer.size",
)

#: Every option of the kafka-segments source and sink: kcodec's own, then Spark's Kafka source's and
#: sink's (the tables of docs/spark.md say what each of Spark's does here; :func:`describe` lists them all).
OPTIONS: tuple[Option, ...] = (
    Option("path", "text", None, "what load(PATH) / save(PATH) name", _ALL, documented=False),
    Option("paths", "text", None, "Spark's several load() paths", _READING, documented=False),
    # kcodec's reader
    Option("verifyCrc", "bool", True, "check batch CRCs"),
    Option("includeControlRecords", "bool", False, "keep COMMIT/ABORT markers and other control records"),
    Option(
        "isolationLevel",
        "choice",
        "read_uncommitted",
        "read_committed drops records of aborted transactions (.txnindex; ABORT markers where index files are missing)",
        aliases=("kafka.isolation.level",),
        choices=("read_uncommitted", "read_committed"),
    ),
    Option("startingOffset", "int", None, "first offset to read (inclusive), in every partition", minimum=0),
    Option("endingOffset", "int", None, "offset to stop at (exclusive)", _BATCH, minimum=0, not_in_stream=_NO_END),
    Option("onCorrupt", "choice", "fail", "skip: skip undecodable batches, reporting them", choices=("fail", "skip")),
    Option("corruptReportPath", "text", None, "a directory for the onCorrupt=skip report (JSON lines)"),
    Option("topic", "text", None, "read: instead of the directory names' topic; write: every row's topic", _ALL),
    Option(
        "partition",
        "int",
        None,
        "read: instead of the directory names' partition; write: every row's partition",
        _ALL,
        minimum=0,
    ),
    Option("splitBytes", "int", DEFAULT_SPLIT_BYTES, "segments larger than this are split", minimum=1),
    Option("maxRowsPerBatch", "int", 10_000, "rows per Arrow record batch", minimum=1),
    Option(
        "view",
        "custom",
        "records",
        "records, batches, an internal topic's view (consumerOffsets, groups, transactions, metadata), or a "
        "housekeeping view (producers, partitionTransactions, compaction)",
    ),
    Option("latest", "bool", False, "internal topics' views: the last row per key, as compaction keeps it"),
    # view=compaction: the log cleaner's settings, by Kafka's names (topic configs, then the broker's)
    Option(
        "cleanerTime",
        "timestamp",
        None,
        "compaction view: the cleaner's clock (default: when the read is planned)",
        _BATCH,
    ),
    Option(
        "release",
        "text",
        "{}.{}".format(*_CLEANER.release),
        "compaction view: the Kafka release whose cleaner runs (X.Y)",
        _BATCH,
    ),
    Option(
        "firstDirtyOffset",
        "int",
        None,
        "compaction view: where the dirty range starts (default: cleaner-offset-checkpoint, else the log start)",
        _BATCH,
        minimum=0,
    ),
    Option(
        "delete.retention.ms",
        "int",
        _CLEANER.delete_retention_ms,
        "compaction view: how long tombstones and markers stay",
        _BATCH,
        minimum=0,
    ),
    Option(
        "min.compaction.lag.ms",
        "int",
        _CLEANER.min_compaction_lag_ms,
        "compaction view: records younger than this stay uncompacted",
        _BATCH,
        minimum=0,
    ),
    Option(
        "segment.bytes",
        "int",
        _CLEANER.segment_bytes,
        "compaction view: the size cleaned segments are grouped to",
        _BATCH,
        minimum=1,
    ),
    Option(
        "segment.index.bytes",
        "int",
        _CLEANER.segment_index_bytes,
        "compaction view: the index size cleaned segments are grouped to",
        _BATCH,
        minimum=1,
    ),
    Option(
        "min.cleanable.dirty.ratio",
        "fraction",
        _CLEANER.min_cleanable_dirty_ratio,
        "compaction view: the dirty ratio at which a broker picks the partition (in (0, 1])",
        _BATCH,
    ),
    Option(
        "producer.id.expiration.ms",
        "int",
        _CLEANER.producer_id_expiration_ms,
        "compaction view: producers idle this long lose their empty batches",
        _BATCH,
        minimum=0,
    ),
    Option(
        "log.cleaner.dedupe.buffer.size",
        "int",
        _CLEANER.dedupe_buffer_size,
        "compaction view: the offset map's memory (24 bytes a key at load factor 0.9)",
        _BATCH,
        minimum=1,
    ),
    Option("sizes", "bool", False, "batches view: add sizeAs, each batch's records as v0/v1/v2 with each codec"),
    Option("sizeSample", "fraction", 1.0, "the fraction of batches that get compressed sizes in sizeAs"),
    Option(
        "txnIndex",
        "choice",
        "auto",
        "derive: always derive aborted transactions from markers",
        choices=("auto", "derive"),
    ),
    Option("maxDecompressedSize", "int", None, "the most one batch may decompress to (64 MiB)", minimum=1),
    Option(
        "valueFormat",
        "choice",
        "binary",
        "confluent: Schema Registry framed values as a typed value column, with value_raw and value_error",
        choices=("binary", "confluent"),
    ),
    Option(
        "keyFormat",
        "choice",
        "binary",
        "confluent: Schema Registry framed keys as a typed key column, with key_raw and key_error",
        choices=("binary", "confluent"),
    ),
    Option("schemas", "text", None, "valueFormat/keyFormat=confluent: a _schemas-N directory, export or registry URL"),
    Option("subject", "text", None, "valueFormat=confluent: the reader schema's subject (default <topic>-value)"),
    Option("messageName", "text", None, "Protobuf values: the column's message (default the file's first)"),
    # Spark's Kafka source
    Option("subscribe", "custom", None, "topics to read, comma-separated"),
    Option("subscribePattern", "custom", None, "a regular expression whole topic names match"),
    Option("assign", "custom", None, 'JSON {"topic":[0,1]}: the partitions to read'),
    Option("startingOffsets", "custom", None, "earliest (a batch's default), latest (a stream's default) or JSON"),
    Option("endingOffsets", "custom", None, "latest (default) or JSON", _BATCH, not_in_stream=_NO_END),
    Option("startingTimestamp", "timestamp", None, "per partition, start at Kafka's ListOffsets answer"),
    Option("endingTimestamp", "timestamp", None, "per partition, stop before it", _BATCH, not_in_stream=_NO_END),
    Option("startingOffsetsByTimestamp", "custom", None, "JSON: a starting timestamp per partition"),
    Option(
        "endingOffsetsByTimestamp",
        "custom",
        None,
        "JSON: an ending timestamp per partition",
        _BATCH,
        not_in_stream=_NO_END,
    ),
    Option(
        "startingOffsetsByTimestampStrategy",
        "choice",
        "error",
        "latest: a partition with no record at or after the timestamp reads nothing",
        choices=("error", "latest"),
    ),
    Option("failOnDataLoss", "bool", True, "false: offsets asked for and not there are skipped, not an error"),
    Option(
        "includeHeaders",
        "bool",
        True,
        "false leaves the headers column out; given at all, a read has Spark's Kafka source's columns only "
        "(7, or 8 with headers)",
    ),
    Option("minPartitions", "int", None, "split finer to get at least this many Spark partitions", minimum=1),
    Option("maxRecordsPerPartition", "int", None, "at most this many offsets per Spark partition", minimum=1),
    Option("maxOffsetsPerTrigger", "int", None, "stream: offsets per micro-batch (a batch read ignores it)", minimum=1),
    Option("minOffsetsPerTrigger", "ignored", None, "a batch read ignores it", _BATCH, not_in_stream=_NO_MIN),
    Option("maxTriggerDelay", "ignored", None, "a batch read ignores it", _BATCH, not_in_stream=_NO_MIN),
    # Spark's, with nothing to do on files: accepted so that a job switches format unchanged
    Option("kafka.bootstrap.servers", "ignored", None, "no broker is involved", _ALL),
    Option("kafka.group.id", "ignored", None, "no broker is involved"),
    Option("groupIdPrefix", "ignored", None, "no broker is involved"),
    Option("kafkaConsumer.pollTimeoutMs", "ignored", None, "no broker is involved"),
    Option("fetchOffset.numRetries", "ignored", None, "no broker is involved"),
    Option("fetchOffset.retryIntervalMs", "ignored", None, "no broker is involved"),
    # consumer settings Spark's Kafka source refuses (KafkaSourceProvider), refused here too
    Option("kafka.auto.offset.reset", "refused", None, "use startingOffsets"),
    Option("kafka.key.deserializer", "refused", None, "keys are bytes; deserialize them with DataFrame operations"),
    Option("kafka.value.deserializer", "refused", None, "values are bytes; deserialize them with DataFrame operations"),
    Option("kafka.enable.auto.commit", "refused", None, "nothing is committed"),
    Option("kafka.interceptor.classes", "refused", None, "interceptors could change records", _ALL),
    # kcodec's writer
    Option("magic", "int", 2, "0, 1 or 2: the record format written", _WRITING, minimum=0),
    Option(
        "compression",
        "choice",
        "none",
        "the codec of the batches written",
        _WRITING,
        aliases=("kafka.compression.type",),
        choices=CODECS,
    ),
    Option("compressionLevel", "int", None, "the codec's level", _WRITING),
    Option("recordsPerBatch", "int", 1000, "records per batch at most", _WRITING, minimum=1),
    Option("batchBytes", "int", 1 << 20, "key, value and header bytes per batch at most", _WRITING, minimum=1),
    Option("segmentBytes", "int", DEFAULT_SEGMENT_BYTES, "segments roll at this size", _WRITING, minimum=1),
    Option(
        "indexIntervalBytes", "int", DEFAULT_INDEX_INTERVAL_BYTES, "bytes between index entries", _WRITING, minimum=0
    ),
    Option("numPartitions", "int", None, "the partition count Kafka's default partitioner uses", _WRITING, minimum=1),
    Option("keepOffsets", "bool", False, "true: the offset column's offsets, not new ones", _WRITING),
    # Spark's Kafka sink: the producer's settings that shape the batches written
    Option("kafka.compression.gzip.level", "int", None, "the level of gzip (KIP-390)", _WRITING),
    Option("kafka.compression.lz4.level", "int", None, "the level of lz4 (KIP-390)", _WRITING),
    Option("kafka.compression.zstd.level", "int", None, "the level of zstd (KIP-390)", _WRITING),
    Option("kafka.batch.size", "int", None, "the producer's batch bytes; 0: one record per batch", _WRITING, minimum=0),
    Option("kafka.linger.ms", "int", None, "checked only: every row is at hand", _WRITING, minimum=0),
    Option("kafka.partitioner.ignore.keys", "bool", False, "true: keyed rows are placed as keyless ones", _WRITING),
    Option("kafka.acks", "ignored", None, "no broker is involved", _WRITING),
    Option("kafka.enable.idempotence", "ignored", None, "no broker is involved", _WRITING),
    Option("kafka.transactional.id", "ignored", None, "no broker is involved", _WRITING),
    # producer settings Spark's Kafka sink refuses (kafkaParamsForProducer), and Java code on the records
    Option(
        "kafka.key.serializer", "refused", None, "keys are serialized as bytes (Spark: ByteArraySerializer)", _WRITING
    ),
    Option(
        "kafka.value.serializer",
        "refused",
        None,
        "values are serialized as bytes (Spark: ByteArraySerializer)",
        _WRITING,
    ),
    Option(
        "kafka.partitioner.class",
        "refused",
        None,
        "a Java partitioner cannot run here; give a partition column, or rely on Kafka's default partitioner "
        "(murmur2 of the key)",
        _WRITING,
    ),
    Option(SAVE_MODE_OPTION, "choice", "append", "Spark's save mode", _WRITING, choices=SAVE_MODES, documented=False),
)

#: The read options that bound a read by offset or timestamp (one list for the reads that take the whole log
#: or choose the range themselves: Kafka 0.7 partitions, the table pipeline)
RANGE_OPTIONS = (
    "startingOffsets",
    "endingOffsets",
    "startingOffset",
    "endingOffset",
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
)

_BY_NAME = {o.name: o for o in OPTIONS}


def option(name: str) -> Option:
    """The table's row for ``name`` (as documented; an alias names its setting's row)."""
    found = _BY_NAME.get(name) or next((o for o in OPTIONS if name in o.aliases), None)
    if found is None:
        raise KeyError(name)
    return found


def default(name: str) -> Any:
    """Option ``name``'s default, as the table has it."""
    return option(name).default


def option_names(surface: str) -> tuple[str, ...]:
    """The names ``surface`` (``read``, ``stream``, ``write``) accepts, aliases included."""
    return tuple(n for o in OPTIONS if surface in o.applies_to and o.kind != "refused" for n in (o.name, *o.aliases))


def refused_names(surface: str) -> dict[str, str]:
    """The names ``surface`` refuses (lowercased, as Spark passes them), with why."""
    return {o.name.lower(): o.doc for o in OPTIONS if surface in o.applies_to and o.kind == "refused"}


_UNSET: Any = object()


def _parse(options, name: str, o: Option, fallback):
    if o.kind == "bool":
        return bool_option(options, name, fallback)
    if o.kind == "int":
        return int_option(options, name, fallback, o.minimum)
    if o.kind == "choice":
        return choice_option(options, name, fallback, o.choices)
    if o.kind == "fraction":
        return fraction_option(options, name, fallback)
    if o.kind == "timestamp":
        return timestamp_option(options, name)
    if o.kind == "text":
        return options.get(name.lower()) or fallback
    raise TypeError(f"option {name} ({o.kind}) has its own parser")


def value(options, name: str, fallback: Any = _UNSET) -> Any:
    """Option ``name`` from ``options`` (names lowercased, as Spark passes them), parsed as its row of
    :data:`OPTIONS` says; absent, its default (or ``fallback``). A setting given under its name and an
    alias must have one value."""
    o = option(name)
    fallback = o.default if fallback is _UNSET else fallback
    names = [name] + [n for n in (o.name, *o.aliases) if n != name]
    given = [(n, _parse(options, n, o, fallback)) for n in names if n.lower() in options]
    if not given:
        return _parse(options, name, o, fallback)
    (first, v), *others = given
    for other, w in others:
        agree(options, first, other, v, w)
    return v


def agree(options, ours: str, theirs: str, value_ours, value_theirs):
    """kcodec's option and Spark's (or the producer's) name one setting: either, or both alike."""
    if ours.lower() in options and theirs.lower() in options and value_ours != value_theirs:
        raise OptionError(f"options {ours} ({value_ours}) and {theirs} ({value_theirs}) disagree")
    return value_ours if ours.lower() in options else value_theirs


def stream_refusal(options) -> str | None:
    """Why a stream refuses one of ``options`` (a batch read's bound or limit), or None."""
    for o in OPTIONS:
        if o.not_in_stream and o.name.lower() in options:
            return f"kafka-segments: option {o.name} {o.not_in_stream}"
    return None


def describe(surface: str) -> str:
    """The documented options of ``surface`` as a Markdown table: names (aliases too), default, meaning."""
    rows = ["| option | default | what it does |", "|---|---|---|"]
    for o in OPTIONS:
        if surface in o.applies_to and o.documented:
            names = ", ".join(f"`{n}`" for n in (o.name, *o.aliases))
            shown = "" if o.default is None else f"`{str(o.default).lower() if o.kind == 'bool' else o.default}`"
            doc = f"{o.kind}: {o.doc}" if o.kind in ("ignored", "refused") else o.doc
            rows.append(f"| {names} | {shown} | {doc} |")
    return "\n".join(rows) + "\n"


# ----------------------------------------------------------------------------- names


def check_read_names(opts: dict) -> None:
    """Unknown names fail, naming the closest known one. Other ``kafka.*`` consumer settings
    (security, timeouts ...) mean nothing for files and pass, as Spark hands them to a consumer,
    unless they are a near miss of ``kafka.isolation.level``."""
    check_names(opts, READ_OPTIONS, refused_names(READ))


def check_names(opts: dict, known: tuple[str, ...], refused: dict[str, str]) -> None:
    """The names check of a reader or writer: ``refused`` names fail with their reason, object-store
    names pass, other names must be ``known``; a ``kafka.*`` name Spark would hand to a Kafka client
    passes unless it is a near miss of a known ``kafka.*`` one (a misspelled setting must not be lost)."""
    for name in opts:
        if name in refused:
            raise OptionError(f"kafka-segments: option {name} is not supported (as in Spark): {refused[name]}")
    opts = {k: v for k, v in opts.items() if str(k).lower() not in STORAGE_OPTIONS}
    plain = {k: v for k, v in opts.items() if not k.startswith("kafka.")}
    kafka = {k: v for k, v in opts.items() if k not in plain}
    check_known(plain, known, "kafka-segments")
    known_kafka = tuple(k for k in known if k.startswith("kafka."))
    near = {
        k: v
        for k, v in kafka.items()
        if any(difflib.SequenceMatcher(None, k, kk.lower()).ratio() >= 0.85 for kk in known_kafka)
    }
    check_known(near, known_kafka, "kafka-segments")


def check_write_names(opts: dict) -> None:
    """A writer's names, as :func:`check_read_names` checks a reader's."""
    check_names(opts, WRITE_OPTIONS, refused_names(WRITE))


#: Every name a read (batch or stream) accepts, and every name a write does, from :data:`OPTIONS`.
READ_OPTIONS: tuple[str, ...] = option_names(READ)
WRITE_OPTIONS: tuple[str, ...] = option_names(WRITE)


def preferred(opts: dict, *names: str):
    """Spark's preference among a global timestamp, per-partition timestamps and offsets."""
    for name in names:
        if opts.get(name.lower()) not in (None, ""):
            return name
    return None


def as_items(mapping) -> tuple | None:
    """A mapping as sorted pairs (ReadOptions stays hashable); ``earliest`` / ``latest``, the
    defaults of a batch read, bound nothing and are None."""
    return tuple(sorted(mapping.items())) if isinstance(mapping, dict) else None


def check_offset_pairs(start: dict | str | None, end: dict | str | None, what: str) -> None:
    """Spark's checks when both ends name partitions: the same partitions, and no start past its end."""
    if not isinstance(start, dict) or not isinstance(end, dict):
        return
    if start.keys() != end.keys():
        raise OptionError(
            f"kafka-segments: the starting and ending {what}s name different partitions: "
            f"{tp_names(start)} and {tp_names(end)}"
        )
    for tp, s in start.items():
        if s >= 0 and end[tp] >= 0 and s > end[tp]:
            raise OptionError(
                f"kafka-segments: the starting {what} {s} of {tp[0]}-{tp[1]} is past its ending {what} {end[tp]}"
            )


def tp_names(tps) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(tps)) or "(none)"


def fraction_option(options, name: str, default: float) -> float:
    """A fraction in (0, 1]."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise OptionError(f"option {name} must be a number in (0, 1], not {raw!r}") from None
    if not 0 < value <= 1:
        raise OptionError(f"option {name} must be in (0, 1], not {raw!r}")
    return value


def view_option(options) -> str:
    """``view``: records, batches, or a view of Kafka's internal topics (:mod:`kcodec.internal_topics.views`),
    any case (Spark may lowercase values it passes on)."""
    from kcodec.internal_topics.views import VIEWS
    from kcodec.spark.housekeeping_columns import HOUSEKEEPING_VIEWS

    names = ("records", "batches", *VIEWS, *HOUSEKEEPING_VIEWS)
    raw = options.get("view")
    if raw is None:
        return default("view")
    view = {n.lower(): n for n in names}.get(str(raw).strip().lower())
    if view is None:
        raise OptionError(f"option view must be one of {', '.join(names)}, not {raw!r}")
    return view


def latest_option(options, view: str) -> bool:
    """``latest``: the last row per key, as compaction keeps it; only the compacted topics' views have keys."""
    latest = value(options, "latest")
    if latest and view not in ("consumerOffsets", "groups", "transactions"):
        raise OptionError(f"option latest applies to view consumerOffsets, groups or transactions, not {view}")
    return latest


def cleaner_option(options, view: str) -> CleanerConfig | None:
    """``view=compaction``'s cleaner settings (:data:`_CLEANER_OPTIONS`); given with another view, refused."""
    if view != "compaction":
        given = [n for n in _CLEANER_OPTIONS if n.lower() in options]
        if given:
            raise OptionError(f"option {given[0]} applies to view compaction, not {view}")
        return None
    import time

    raw = value(options, "release")
    try:
        release = parse_release(raw)
    except ValueError:
        raise OptionError(f"option release must be a Kafka release like 3.0 or 4.1, not {raw!r}") from None
    now = value(options, "cleanerTime")
    return CleanerConfig(
        now_ms=int(time.time() * 1000) if now is None else now,
        delete_retention_ms=value(options, "delete.retention.ms"),
        min_compaction_lag_ms=value(options, "min.compaction.lag.ms"),
        segment_bytes=value(options, "segment.bytes"),
        segment_index_bytes=value(options, "segment.index.bytes"),
        min_cleanable_dirty_ratio=value(options, "min.cleanable.dirty.ratio"),
        producer_id_expiration_ms=value(options, "producer.id.expiration.ms"),
        dedupe_buffer_size=value(options, "log.cleaner.dedupe.buffer.size"),
        release=release,
    )


# ----------------------------------------------------------------------------- the reader's options


@dataclass(frozen=True)
class ReadOptions:
    """The reader's options, parsed once on the driver (names as Spark spells them); a stream's are these
    too (:class:`kcodec.spark.stream.StreamOptions`)."""

    path: str
    verify_crc: bool = default("verifyCrc")
    include_control: bool = default("includeControlRecords")
    read_committed: bool = default("isolationLevel") == "read_committed"
    starting_offset: int | None = default("startingOffset")
    ending_offset: int | None = default("endingOffset")  # exclusive
    starting_timestamp: int | None = default("startingTimestamp")  # ms
    on_corrupt: str = default("onCorrupt")  # fail | skip
    corrupt_report_path: str | None = default("corruptReportPath")
    split_bytes: int = default("splitBytes")
    min_partitions: int | None = default("minPartitions")  # cut segments smaller to get at least this many splits
    max_rows: int = default("maxRowsPerBatch")  # rows per Arrow record batch
    topic: str | None = default("topic")
    partition: int | None = default("partition")
    view: str = default("view")  # records | batches | an internal topic's view (kcodec.internal_topics.views)
    latest: bool = default("latest")  # internal topics' views: the last row per key (kcodec.spark.views)
    sizes: bool = default("sizes")  # batches view: what each batch would take as v0/v1/v2 with each codec
    size_sample: float = default("sizeSample")  # the fraction of batches with compressed sizes (sizes.sampled)
    txn_index: str = default("txnIndex")  # auto | derive
    max_decompressed_size: int | None = default("maxDecompressedSize")
    value_format: str = default("valueFormat")  # binary | confluent (kcodec.spark.value_columns)
    key_format: str = default("keyFormat")
    schemas: str | None = default("schemas")
    subject: str | None = default("subject")
    message_name: str | None = default("messageName")
    # Spark's Kafka source options (offsets per (topic, partition): -2 earliest, -1 latest)
    subscribe: tuple[str, ...] | None = None
    subscribe_pattern: re.Pattern | None = None
    assign: tuple[TopicPartition, ...] | None = None
    starting_offsets: tuple[tuple[TopicPartition, int], ...] | None = None
    ending_offsets: tuple[tuple[TopicPartition, int], ...] | None = None
    starting_timestamps: tuple[tuple[TopicPartition, int], ...] | None = None
    ending_timestamp: int | None = None
    ending_timestamps: tuple[tuple[TopicPartition, int], ...] | None = None
    no_match: str = default("startingOffsetsByTimestampStrategy")  # error | latest
    fail_on_data_loss: bool = default("failOnDataLoss")
    include_headers: bool = default("includeHeaders")
    kafka_schema: bool = False  # includeHeaders given: Spark's Kafka source's columns and no others
    max_records_per_partition: int | None = default("maxRecordsPerPartition")
    storage: Storage = ()  # object-store endpoint and credentials (kcodec.log.fs.STORAGE_OPTIONS)
    cleaner: CleanerConfig | None = None  # view=compaction: the cleaner's settings, clock fixed on the driver
    first_dirty_offset: int | None = default("firstDirtyOffset")

    @classmethod
    def from_options(cls, options) -> ReadOptions:
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        path = opts.get("path")
        if not path:
            raise ValueError("kafka-segments needs a path: spark.read.format('kafka-segments').load(PATH)")
        check_read_names(opts)
        strategies = [n for n in ("subscribe", "subscribePattern", "assign") if n.lower() in opts]
        if len(strategies) > 1:
            raise OptionError(
                f"kafka-segments: only one of subscribe, subscribePattern, assign may be given, not {strategies}"
            )
        start, end = value(opts, "startingOffset"), value(opts, "endingOffset")
        # Spark's preference: a global timestamp, then timestamps per partition, then offsets
        starting = preferred(opts, "startingTimestamp", "startingOffsetsByTimestamp", "startingOffsets")
        ending = preferred(opts, "endingTimestamp", "endingOffsetsByTimestamp", "endingOffsets")
        starting_offsets = (
            offsets_option(opts, "startingOffsets", starting=True) if starting == "startingOffsets" else None
        )
        ending_offsets = offsets_option(opts, "endingOffsets", starting=False) if ending == "endingOffsets" else None
        starting_ts = (
            partition_map_option(opts, "startingOffsetsByTimestamp")
            if starting == "startingOffsetsByTimestamp"
            else None
        )
        ending_ts = (
            partition_map_option(opts, "endingOffsetsByTimestamp") if ending == "endingOffsetsByTimestamp" else None
        )
        check_offset_pairs(starting_offsets, ending_offsets, "offset")
        check_offset_pairs(starting_ts, ending_ts, "timestamp")
        return cls(
            path=str(path),
            verify_crc=value(opts, "verifyCrc"),
            include_control=value(opts, "includeControlRecords"),
            read_committed=value(opts, "isolationLevel") == "read_committed",
            starting_offset=start,
            ending_offset=end,
            starting_timestamp=value(opts, "startingTimestamp"),
            subscribe=topics_option(opts),
            subscribe_pattern=pattern_option(opts),
            assign=assign_option(opts),
            starting_offsets=as_items(starting_offsets),
            ending_offsets=as_items(ending_offsets),
            starting_timestamps=as_items(starting_ts),
            ending_timestamp=value(opts, "endingTimestamp"),
            ending_timestamps=as_items(ending_ts),
            no_match=value(opts, "startingOffsetsByTimestampStrategy"),
            fail_on_data_loss=value(opts, "failOnDataLoss"),
            include_headers=value(opts, "includeHeaders"),
            kafka_schema="includeheaders" in {str(k).lower() for k in opts},
            max_records_per_partition=value(opts, "maxRecordsPerPartition"),
            on_corrupt=value(opts, "onCorrupt"),
            corrupt_report_path=value(opts, "corruptReportPath"),
            split_bytes=value(opts, "splitBytes"),
            min_partitions=value(opts, "minPartitions"),
            max_rows=value(opts, "maxRowsPerBatch"),
            topic=value(opts, "topic"),
            partition=value(opts, "partition"),
            view=view_option(opts),
            latest=latest_option(opts, view_option(opts)),
            sizes=value(opts, "sizes"),
            size_sample=value(opts, "sizeSample"),
            txn_index=value(opts, "txnIndex"),
            max_decompressed_size=value(opts, "maxDecompressedSize"),
            value_format=value(opts, "valueFormat"),
            key_format=value(opts, "keyFormat"),
            schemas=value(opts, "schemas"),
            subject=value(opts, "subject"),
            message_name=value(opts, "messageName"),
            storage=storage_options(opts),
            cleaner=cleaner_option(opts, view_option(opts)),
            first_dirty_offset=value(opts, "firstDirtyOffset"),
        )

    @property
    def spark_ranges(self) -> bool:
        """Whether Spark's offset or timestamp options bound the read (resolved per partition)."""
        return (
            any(
                v is not None
                for v in (self.starting_offsets, self.ending_offsets, self.starting_timestamps, self.ending_timestamps)
            )
            or self.ending_timestamp is not None
        )

    def reader_options(self) -> dict[str, bool | int]:
        """The keyword arguments :func:`kcodec.records.reader.read_batches` takes from these options."""
        out: dict[str, bool | int] = {"verify_crc": self.verify_crc}
        if self.max_decompressed_size is not None:
            out["max_decompressed_size"] = self.max_decompressed_size
        return out
