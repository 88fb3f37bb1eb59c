"""kcodec's records rows (the kafka-segments source's records view, what ``kcodec pipeline`` writes as
DEST/records) built without Spark: each batch decoded to Arrow columns (kcodec.records.columnar) and
turned into rows by the data source's own builder (kcodec.spark.arrow.RecordColumns)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from kcodec.log.partition import Partition, list_partitions
from kcodec.records.columnar import entry_to_arrow
from kcodec.records.reader import read_batches
from kcodec.spark.arrow import RECORD_COLUMNS, RecordColumns


def records_table(log_dir: Path, *, include_control: bool = True, drop: tuple[str, ...] = ()) -> pa.Table:
    """Every record of the partition directories under ``log_dir`` (or of one partition directory) as the
    records view's rows; ``drop`` leaves columns out (a table written before they existed)."""
    columns = [(c, True) for c in RECORD_COLUMNS if c.name not in drop]
    rows = RecordColumns(columns)
    parts = list_partitions(log_dir) or [Partition(log_dir)]
    for part in parts:
        topic, partition = part.topic, part.partition
        for seg in Partition(part.path).segments:
            for batch in read_batches(seg.log, strict=True, decode=entry_to_arrow):
                if batch.is_control and not include_control:
                    continue
                rows.add(batch, batch.table, topic, partition, str(seg.log))
    out = rows.flush()
    return pa.Table.from_batches([out] if out is not None else [], schema=rows.schema)
