#!/usr/bin/env bash
# Builds one libFuzzer target with clang (-fsanitize=fuzzer,address,undefined) and
# runs a short session over its corpus. The target's source names what it links:
#   // fuzz-link: snapshot/reader.cc snapshot/format.cc common/*.cc
#   // fuzz-pkg: liblz4 libxxhash
#   // fuzz-seed: tests/data/small.amem
# (paths relative to SOURCE_DIR, globs allowed). Every file in
# tests/data/fuzz_<name>/ (<name> = the source path without _fuzz.cc, / as _) is an
# input that once failed or a hand-made seed; libFuzzer runs each of them first.
# Usage: run_fuzz.sh SOURCE_DIR WORK_DIR TARGET_SOURCE [RUNS] [SECONDS]
#   AMEM_FUZZ_CXX     the clang++ to use (default clang++)
#   AMEM_FUZZ_TIMEOUT seconds one input may take before it counts as a failure (10)
set -euo pipefail
src=$1 work=$2 target=$3 runs=${4:-20000} secs=${5:-20}
cxx=${AMEM_FUZZ_CXX:-clang++}
name=${target%_fuzz.cc}
name=${name//\//_}
tag() { sed -n "s|^// $1:[[:space:]]*||p" "$src/$target"; }
links=() seeds=()
for p in $(tag fuzz-link); do links+=("$src"/$p); done
for p in $(tag fuzz-seed); do seeds+=("$src"/$p); done
pkgs=$(tag fuzz-pkg)
corpus=$work/corpus-$name
mkdir -p "$corpus"
for f in "${seeds[@]}"; do cp "$f" "$corpus/seed-$(basename "$f")"; done
if [[ -d "$src/tests/data/fuzz_$name" ]]; then cp "$src/tests/data/fuzz_$name"/* "$corpus/"; fi
bin=$work/fuzz_$name
# shellcheck disable=SC2054  # the commas are part of -fsanitize=...
# -gline-tables-only: a crash's stack still names each file and line, and the
# compiles (most of a cold run's sessions) take about 6% less than with -g.
flags=(-std=c++20 -O1 -gline-tables-only -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
# Each source is compiled on its own, through ccache when it is installed (with the
# settings CMakeLists.txt uses, so clones share it), so a second run recompiles only
# what changed; then one link.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(env CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1 ccache)
fi
objdir=$work/obj-$name
mkdir -p "$objdir"
objs=()
for s in "$src/$target" "${links[@]}"; do
  rel=${s#"$src"/}
  o=$objdir/${rel//\//_}.o
  # shellcheck disable=SC2086
  "${launcher[@]}" "$cxx" "${flags[@]}" -I"$src" ${pkgs:+$(pkg-config --cflags $pkgs)} \
    -c "$s" -o "$o"
  objs+=("$o")
done
# shellcheck disable=SC2086
"$cxx" "${flags[@]}" "${objs[@]}" ${pkgs:+$(pkg-config --libs $pkgs)} -o "$bin"
# -rss_limit_mb: nothing may allocate more than its input justifies.
"$bin" -runs="$runs" -max_total_time="$secs" -rss_limit_mb=512 -max_len=16384 \
  -timeout="${AMEM_FUZZ_TIMEOUT:-10}" "$corpus"
