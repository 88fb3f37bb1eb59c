"""Parsing the data source's options as Spark passes them (a case-insensitive
string map): booleans, integers with a floor, fractions, one of a few words, timestamps,
unknown names, and the values of Spark's Kafka source options (per-partition
offset JSON, ``assign``, ``subscribe``, ``subscribePattern``)."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from kcodec.errors import KcodecError
from kcodec.log.fs import Storage, storage_options

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
    "read_committed_option",
    "preferred",
    "as_items",
    "check_offset_pairs",
    "tp_names",
    "view_option",
    "latest_option",
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


# ----------------------------------------------------------------------------- the reader's names

#: Every read option of the kafka-segments source, as documented (Spark passes names lowercased):
#: kcodec's own first, then Spark's Kafka source's; the README says what each does here.
READ_OPTIONS: tuple[str, ...] = (
    "path",
    "paths",
    "verifyCrc",
    "includeControlRecords",
    "isolationLevel",
    "startingOffset",
    "endingOffset",
    "onCorrupt",
    "corruptReportPath",
    "topic",
    "partition",
    "splitBytes",
    "maxRowsPerBatch",
    "view",
    "latest",
    "sizes",
    "sizeSample",
    "txnIndex",
    "maxDecompressedSize",
    # Spark's Kafka source
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "endingOffsets",
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "failOnDataLoss",
    "includeHeaders",
    "minPartitions",
    "maxRecordsPerPartition",
    "kafka.isolation.level",
    # Spark's, with nothing to do on files: accepted so that a job switches format unchanged
    "kafka.bootstrap.servers",
    "kafka.group.id",
    "groupIdPrefix",
    "kafkaConsumer.pollTimeoutMs",
    "fetchOffset.numRetries",
    "fetchOffset.retryIntervalMs",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
)

#: Consumer settings Spark's Kafka source refuses (KafkaSourceProvider), refused here too.
_REFUSED_KAFKA = {
    "kafka.auto.offset.reset": "use startingOffsets",
    "kafka.key.deserializer": "keys are bytes; deserialize them with DataFrame operations",
    "kafka.value.deserializer": "values are bytes; deserialize them with DataFrame operations",
    "kafka.enable.auto.commit": "nothing is committed",
    "kafka.interceptor.classes": "interceptors could change records",
}


def check_read_names(opts: dict) -> None:
    """Unknown names fail, naming the closest known one. Other ``kafka.*`` consumer settings
    (security, timeouts ...) mean nothing for files and pass, as Spark hands them to a consumer,
    unless they are a near miss of ``kafka.isolation.level``."""
    check_names(opts, READ_OPTIONS, _REFUSED_KAFKA)


def check_names(opts: dict, known: tuple[str, ...], refused: dict[str, str]) -> None:
    """The names check of a reader or writer: ``refused`` names fail with their reason, object-store
    names pass, other names must be ``known``; a ``kafka.*`` name Spark would hand to a Kafka client
    passes unless it is a near miss of a known ``kafka.*`` one (a misspelled setting must not be lost)."""
    for name in opts:
        if name in refused:
            raise OptionError(f"kafka-segments: option {name} is not supported (as in Spark): {refused[name]}")
    from kcodec.log.fs import STORAGE_OPTIONS  # object-store endpoint and credentials: known names too

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


#: Every write option of the kafka-segments sink: kcodec's own, then Spark's Kafka sink's
#: (``kafka.*`` are the producer's settings); the README says what each does here.
WRITE_OPTIONS: tuple[str, ...] = (
    "path",
    "magic",
    "compression",
    "compressionLevel",
    "recordsPerBatch",
    "batchBytes",
    "segmentBytes",
    "indexIntervalBytes",
    "topic",
    "partition",
    "numPartitions",
    "keepOffsets",
    # Spark's Kafka sink: the producer's settings that shape the batches written
    "kafka.compression.type",
    "kafka.compression.gzip.level",
    "kafka.compression.lz4.level",
    "kafka.compression.zstd.level",
    "kafka.batch.size",
    "kafka.linger.ms",
    "kafka.partitioner.ignore.keys",
    # Spark's, with nothing to do on files: accepted so that a job switches format unchanged
    "kafka.bootstrap.servers",
    "kafka.acks",
    "kafka.enable.idempotence",
    "kafka.transactional.id",
)

#: Producer settings Spark's Kafka sink refuses (KafkaSourceProvider.kafkaParamsForProducer), and
#: those that would run Java code on the records, refused here too.
_REFUSED_KAFKA_WRITE = {
    "kafka.key.serializer": "keys are serialized as bytes (Spark: ByteArraySerializer)",
    "kafka.value.serializer": "values are serialized as bytes (Spark: ByteArraySerializer)",
    "kafka.partitioner.class": "a Java partitioner cannot run here; give a partition column, or rely on "
    "Kafka's default partitioner (murmur2 of the key)",
    "kafka.interceptor.classes": "interceptors could change records",
}


def check_write_names(opts: dict) -> None:
    """A writer's names, as :func:`check_read_names` checks a reader's."""
    check_names(opts, WRITE_OPTIONS + (SAVE_MODE_OPTION,), _REFUSED_KAFKA_WRITE)


#: How kcodec's DataFrameWriter hook (kcodec.spark.savemode) tells the writer Spark's save mode.
SAVE_MODE_OPTION = "kcodec.saveMode"


def read_committed_option(opts: dict) -> bool:
    """read_committed? from kcodec's ``isolationLevel`` or Spark's ``kafka.isolation.level``."""
    choices = ("read_uncommitted", "read_committed")
    ours, sparks = (choice_option(opts, n, choices[0], choices) if n.lower() in opts else None for n in _LEVELS)
    if ours and sparks and ours != sparks:
        raise OptionError(f"options isolationLevel ({ours}) and kafka.isolation.level ({sparks}) disagree")
    return (ours or sparks) == "read_committed"


_LEVELS = ("isolationLevel", "kafka.isolation.level")


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

    names = ("records", "batches", *VIEWS)
    raw = options.get("view")
    if raw is None:
        return "records"
    view = {n.lower(): n for n in names}.get(str(raw).strip().lower())
    if view is None:
        raise OptionError(f"option view must be one of {', '.join(names)}, not {raw!r}")
    return view


def latest_option(options, view: str) -> bool:
    """``latest``: the last row per key, as compaction keeps it; only the compacted topics' views have keys."""
    latest = bool_option(options, "latest", False)
    if latest and view not in ("consumerOffsets", "groups", "transactions"):
        raise OptionError(f"option latest applies to view consumerOffsets, groups or transactions, not {view}")
    return latest


# ----------------------------------------------------------------------------- the reader's options


@dataclass(frozen=True)
class ReadOptions:
    """The reader's options, parsed once on the driver (names as Spark spells them); a stream's are these
    too (:class:`kcodec.spark.stream.StreamOptions`)."""

    path: str
    verify_crc: bool = True
    include_control: bool = False
    read_committed: bool = False
    starting_offset: int | None = None
    ending_offset: int | None = None  # exclusive
    starting_timestamp: int | None = None  # ms
    on_corrupt: str = "fail"  # fail | skip
    corrupt_report_path: str | None = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    min_partitions: int | None = None  # cut segments smaller so that there are at least this many splits
    max_rows: int = 10_000  # rows per Arrow record batch
    topic: str | None = None
    partition: int | None = None
    view: str = "records"  # records | batches | an internal topic's view (kcodec.internal_topics.views)
    latest: bool = False  # internal topics' views: the last row per key (kcodec.spark.views)
    sizes: bool = False  # batches view: what each batch would take as v0/v1/v2 with each codec
    size_sample: float = 1.0  # the fraction of batches that get compressed sizes (kcodec.spark.sizes.sampled)
    txn_index: str = "auto"  # auto | derive
    max_decompressed_size: int | None = None
    # Spark's Kafka source options (offsets per (topic, partition): -2 earliest, -1 latest)
    subscribe: tuple[str, ...] | None = None
    subscribe_pattern: re.Pattern | None = None
    assign: tuple[TopicPartition, ...] | None = None
    starting_offsets: tuple[tuple[TopicPartition, int], ...] | None = None
    ending_offsets: tuple[tuple[TopicPartition, int], ...] | None = None
    starting_timestamps: tuple[tuple[TopicPartition, int], ...] | None = None
    ending_timestamp: int | None = None
    ending_timestamps: tuple[tuple[TopicPartition, int], ...] | None = None
    no_match: str = "error"  # startingOffsetsByTimestampStrategy: error | latest
    fail_on_data_loss: bool = True
    include_headers: bool = True
    max_records_per_partition: int | None = None
    storage: Storage = ()  # object-store endpoint and credentials (kcodec.log.fs.STORAGE_OPTIONS)

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
        start, end = int_option(opts, "startingOffset", None, 0), int_option(opts, "endingOffset", None, 0)
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
            verify_crc=bool_option(opts, "verifyCrc", True),
            include_control=bool_option(opts, "includeControlRecords", False),
            read_committed=read_committed_option(opts),
            starting_offset=start,
            ending_offset=end,
            starting_timestamp=timestamp_option(opts, "startingTimestamp"),
            subscribe=topics_option(opts),
            subscribe_pattern=pattern_option(opts),
            assign=assign_option(opts),
            starting_offsets=as_items(starting_offsets),
            ending_offsets=as_items(ending_offsets),
            starting_timestamps=as_items(starting_ts),
            ending_timestamp=timestamp_option(opts, "endingTimestamp"),
            ending_timestamps=as_items(ending_ts),
            no_match=choice_option(opts, "startingOffsetsByTimestampStrategy", "error", ("error", "latest")),
            fail_on_data_loss=bool_option(opts, "failOnDataLoss", True),
            include_headers=bool_option(opts, "includeHeaders", True),
            max_records_per_partition=int_option(opts, "maxRecordsPerPartition", None, 1),
            on_corrupt=choice_option(opts, "onCorrupt", "fail", ("fail", "skip")),
            corrupt_report_path=opts.get("corruptreportpath") or None,
            split_bytes=int_option(opts, "splitBytes", DEFAULT_SPLIT_BYTES, 1),
            min_partitions=int_option(opts, "minPartitions", None, 1),
            max_rows=int_option(opts, "maxRowsPerBatch", 10_000, 1),
            topic=opts.get("topic") or None,
            partition=int_option(opts, "partition", None, 0),
            view=view_option(opts),
            latest=latest_option(opts, view_option(opts)),
            sizes=bool_option(opts, "sizes", False),
            size_sample=fraction_option(opts, "sizeSample", 1.0),
            txn_index=choice_option(opts, "txnIndex", "auto", ("auto", "derive")),
            max_decompressed_size=int_option(opts, "maxDecompressedSize", None, 1),
            storage=storage_options(opts),
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

    def reader_options(self) -> dict:
        out = {"verify_crc": self.verify_crc}
        if self.max_decompressed_size is not None:
            out["max_decompressed_size"] = self.max_decompressed_size
        return out
