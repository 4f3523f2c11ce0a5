# Shell helpers the process benchmarks share (source it; needs /usr/bin/time).
#   median            reads numbers, one a line, prints their median ("nan": none)
#   timed FILE CMD... runs CMD (stdout discarded), appends "<ms> <peak RSS KB>"
#                     to FILE; $work/rss is its scratch file
#   col N FILE        the median of column N of FILE
median() {
  sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
timed() {
  local out=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/rss" "$@" > /dev/null
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000 )) $(cat "$work/rss")" | awk '{printf "%.1f %d\n", $1 / 1000, $2}' >> "$out"
}
col() { awk -v c="$1" '{print $c}' "$2" | median; }
