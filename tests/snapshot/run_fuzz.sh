#!/usr/bin/env bash
# Builds snapshot/reader_fuzz.cc with clang (-fsanitize=fuzzer,address,undefined)
# and runs a short libFuzzer session seeded with the golden file and with the
# inputs in tests/data/fuzz_reader/ that once crashed it.
# Usage: run_fuzz.sh SOURCE_DIR WORK_DIR [RUNS] [SECONDS]
set -euo pipefail
src=$1 work=$2 runs=${3:-20000} secs=${4:-20}
cxx=${AMEM_FUZZ_CXX:-clang++}
mkdir -p "$work/corpus"
cp "$src/tests/data/small.amem" "$work/corpus/seed-small.amem"
# Inputs that once failed: they must keep passing (libFuzzer runs every corpus file).
cp "$src"/tests/data/fuzz_reader/* "$work/corpus/"
"$cxx" -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -I"$src" \
  "$src/snapshot/reader_fuzz.cc" "$src/snapshot/reader.cc" "$src/snapshot/format.cc" \
  "$src/snapshot/string_list.cc" "$src"/common/*.cc \
  $(pkg-config --cflags --libs liblz4 libxxhash) -o "$work/amem_reader_fuzz"
# -rss_limit_mb: the reader must never allocate more than a file justifies.
"$work/amem_reader_fuzz" -runs="$runs" -max_total_time="$secs" -rss_limit_mb=512 \
  -max_len=16384 -timeout=10 "$work/corpus"
