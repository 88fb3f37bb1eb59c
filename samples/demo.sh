#!/usr/bin/env bash
# The README's demo: kcodec on the bundled sample data. Usage: demo.sh PATH/TO/kcodec
set -euo pipefail
kcodec=${1:-kcodec}
here=$(cd "$(dirname "$0")" && pwd)

step() { printf '\n$ kcodec %s\n' "$*"; "$kcodec" "$@"; }

step generate --check
step layout record_batch --version 2
step layout legacy_message --version 1
step size --key-size 3 --value-size 5
step size --key-size -1 --value-size 6 --records 10
step size --magic 2 --key-size 16 --value-size 200 --records 1000 --header 1:8

# The data pipeline on Spark (pyspark comes with .[test]; Spark needs Java 17+): segments -> records and
# batches tables (Parquet), with records, batches, bytes and compression ratio per topic-partition and what
# the same records take as v0, v1 and v2 with each codec. samples/make_samples.py wrote samples/data.
data=$here/data out=$here/../build/demo-pipeline
if [ "$(pwd -P)" = "$(cd "$here/.." && pwd -P)" ]; then data=samples/data out=build/demo-pipeline; fi
step pipeline "$data" "$out"
