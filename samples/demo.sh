#!/usr/bin/env bash
# The README's demo: kcodec on the bundled sample data. Usage: demo.sh PATH/TO/kcodec
set -euo pipefail
kcodec=${1:-kcodec}
here=$(cd "$(dirname "$0")" && pwd)

step() { printf '\n$ kcodec %s\n' "$*"; "$kcodec" "$@"; }

data=$here/data out=$here/../build/demo-pipeline
if [ "$(pwd -P)" = "$(cd "$here/.." && pwd -P)" ]; then data=samples/data out=build/demo-pipeline; fi

step generate --check
# A segment with a committed and an aborted transaction, as kafka-dump-log prints it (first lines)
step dump --print-data-log "$data/orders-0/00000000000000000000.log" | head -n 12
step verify "$data"/*/*.log
step index --check "$data/orders-0/00000000000000000000.log"
step inspect "$data/legacy-0/00000000000000000000.log" --batches 1 --records
step layout record_batch --version 2
step layout legacy_message --version 1
step size --key-size 3 --value-size 5
step size --key-size -1 --value-size 6 --records 10
step size --magic 2 --key-size 16 --value-size 200 --records 1000 --header 1:8

# The data pipeline on Spark (pyspark comes with .[test]; Spark needs Java 17+): segments -> records and
# batches tables (Parquet), with records, batches, bytes and compression ratio per topic-partition and what
# the same records take as v0, v1 and v2 with each codec. samples/make_samples.py wrote samples/data.
step pipeline "$data" "$out"
