#!/usr/bin/env bash
# Every test file is named after what it tests (tests/README.md): tests/DIR/X_test.cc
# tests the source X.h/X.cc (or internal/X.h, internal/X.cc) of DIR's library, or one aspect of it (X_ASPECT_test.cc),
# or the library as a whole (LIB_ASPECT_test.cc, LIB being the library's folder name).
# DIR is the source folder: common, store, snapshot, query, bench, or tools/DIR for
# cli, io, mcp and index. Prints each file that matches nothing and fails if there is one.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
bad=0
for t in $(cd tests && ls -- */*_test.cc); do
  dir=${t%%/*}
  name=$(basename "$t" _test.cc)
  case $dir in
    cli|io|mcp|index|view) src=tools/$dir ;;
    *) src=$dir ;;
  esac
  if [ ! -d "$src" ]; then
    echo "tests/$t: no source folder $src/ for tests/$dir/"; bad=1; continue
  fi
  found=0
  prefix=$name
  while :; do
    if [ -e "$src/$prefix.h" ] || [ -e "$src/$prefix.cc" ] || [ -e "$src/internal/$prefix.h" ] ||
       [ -e "$src/internal/$prefix.cc" ] || [ "$prefix" = "$dir" ]; then
      found=1; break
    fi
    case $prefix in *_*) prefix=${prefix%_*} ;; *) break ;; esac
  done
  if [ $found = 0 ]; then
    echo "tests/$t: names no file of $src/ (X_test.cc tests $src/X.h or X.cc)"; bad=1
  fi
done
[ $bad = 0 ] && echo "every test file names what it tests"
exit $bad
