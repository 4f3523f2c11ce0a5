#!/usr/bin/env bash
# amem clone and publish-snapshot (docs/REPLICATION.md, "Bootstrap from a snapshot")
# against a real three-node nats-server cluster on loopback (cluster_lib.sh), started
# and always stopped by this script.
#
#   clone_test.sh AMEM [KILL_TRIALS]     (default 3; 1 under the sanitizers)
#
# Checks: a snapshot of several 128 KiB chunks (a store of vector dimension 8) is
# cloned byte for byte, its tail replayed; a stream with no snapshot is cloned into a
# store of the origin's dimension, which the stream records (its description), and a
# stream that records none (made by hand, as an older amem did) is refused with a
# clear error unless --dimension says it, leaving nothing; `remote add` of a store of
# another dimension is refused; a clone SIGKILLed after a chunk of the download,
# after the import, after the catch-up and after the rename, and at random times,
# leaves DIR absent or complete, never half-built, and a later clone succeeds and
# removes what the killed one left; a damaged chunk and a missing chunk in the
# object store end with exit 5 and nothing left; publish-snapshot --keep N deletes
# all but the N newest snapshots, their chunks included.
set -euo pipefail
amem=$(realpath "$1")
kill_trials=${2:-3}
py=/usr/bin/python3
source "$(dirname "$0")/cluster_lib.sh"  # cluster_start, cluster_bind, cluster_kill

cluster_test_setup clone "$amem"  # dir, the cluster, fail, A
field() { $py -c "import json,sys; print(json.load(sys.stdin)[\"$1\"])"; }
# nothing_left NAME: neither DIR nor a clone's temporary directory of it.
nothing_left() {
  [[ ! -e "$dir/$1" ]] || fail "$1 exists after a failed clone"
  ! compgen -G "$dir/$1.clone-tmp-*" >/dev/null || fail "$1's temporary clone is left: $(ls -d "$dir/$1".clone-tmp-*)"
}
# same_as SRC NAME: NAME exports SRC's bytes (whose header holds the dimension). SRC
# is exported once: it does not change after its first same_as.
same_as() {
  [[ -e "$dir/$1.amem" ]] || A "$1" export "$dir/$1.amem" >/dev/null
  A "$2" export "$dir/$2.amem" >/dev/null || fail "$2 does not export"
  cmp -s "$dir/$1.amem" "$dir/$2.amem" || fail "$2 exports other bytes than $1"
}
# js PORT SUBJECT [PAYLOAD | @FILE]: a request over the NATS protocol (the JetStream
# API, or a publish to a stream); prints the reply.
js() {
  $py - "$@" <<'EOF'
import socket, sys
port, subject = int(sys.argv[1]), sys.argv[2]
payload = sys.argv[3].encode() if len(sys.argv) > 3 else b""
if payload.startswith(b"@"): payload = open(payload[1:], "rb").read()
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(10)
s.recv(4096)
s.sendall(b'CONNECT {"verbose":false}\r\nSUB _INBOX.amemtest 1\r\n' +
          b"PUB %s _INBOX.amemtest %d\r\n" % (subject.encode(), len(payload)) + payload + b"\r\n")
buf = b""
while True:
    at = buf.find(b"MSG _INBOX.amemtest 1 ")
    if at >= 0 and b"\r\n" in buf[at:]:
        line_end = buf.index(b"\r\n", at)
        n = int(buf[at:line_end].split()[-1])
        if len(buf) >= line_end + 2 + n:
            sys.stdout.write(buf[line_end + 2:line_end + 2 + n].decode()); break
    buf += s.recv(65536)
EOF
}
port=${ports[0]}

# ---- A stream with no snapshot: the clone takes the dimension the stream records.
A plain init --dimension 8 >/dev/null
cluster_bind "$amem" "$dir/plain" "$dir/add.out" --stream plain --replicas 1 || exit 1
A plain put-node fact:novector --type fact --content 'no vector' >/dev/null
printf '{"op":"node","key":"fact:v%d","type":"fact","content":"with a vector %d","vector":[1,2,3,4,5,6,7,%d]}\n' \
  1 1 1 2 2 2 3 3 3 | A plain ingest - >/dev/null
"$amem" clone "$servers" --stream plain "$dir/cp" >"$dir/out" 2>&1 || fail "clone of plain: $(cat "$dir/out")"
grep -q "no snapshot published in bucket amem-plain-snapshots" "$dir/out" || fail "clone of plain: $(cat "$dir/out")"
same_as plain cp
[[ $(A cp stats --json | field dimension) == 8 ]] || fail "the clone of plain is not of dimension 8"
! compgen -G "$dir/cp.clone-tmp-*" >/dev/null || fail "clone left its temporary directory"
# --dimension against what the stream records: refused, nothing made.
rc=0; "$amem" clone "$servers" --stream plain "$dir/cq" --dimension 16 2>"$dir/err" || rc=$?
[[ $rc == 4 ]] && grep -q -- "--dimension 16: stream plain records 8" "$dir/err" ||
  fail "clone --dimension 16: exit $rc, $(cat "$dir/err")"
nothing_left cq
# A store of another dimension does not bind to the stream.
A other init --dimension 16 >/dev/null
rc=0; A other remote add "$servers" --stream plain 2>"$dir/err" || rc=$?
[[ $rc == 4 ]] && grep -q "stream plain holds a store of vector dimension 8, this store's is 16" "$dir/err" ||
  fail "remote add of another dimension: exit $rc, $(cat "$dir/err")"
[[ ! -e "$dir/other/remote.json" ]] || fail "a refused binding was recorded"
echo "no snapshot: the clone has the stream's dimension 8; other dimensions refused"

# ---- A stream that records no dimension (created without a description).
js "$port" '$JS.API.STREAM.CREATE.legacy' \
  '{"name":"legacy","subjects":["amem.legacy.rev"],"storage":"file","num_replicas":1,"deny_delete":true,"deny_purge":true}' \
  >"$dir/create.out"
grep -q '"created"' "$dir/create.out" || fail "could not create stream legacy: $(cat "$dir/create.out")"
A legacy init --dimension 8 >/dev/null
printf '{"op":"node","key":"fact:l","type":"fact","content":"legacy","vector":[8,7,6,5,4,3,2,1]}\n' |
  A legacy ingest - >/dev/null
A legacy remote add "$servers" --stream legacy >/dev/null || fail "legacy did not bind"
rc=0; "$amem" clone "$servers" --stream legacy "$dir/cl" 2>"$dir/err" || rc=$?
[[ $rc == 4 ]] && grep -q "stream legacy does not record its store's vector dimension.*--dimension N" "$dir/err" ||
  fail "clone of a stream without a dimension: exit $rc, $(cat "$dir/err")"
nothing_left cl
"$amem" clone "$servers" --stream legacy "$dir/cl" --dimension 8 >"$dir/out" 2>&1 ||
  fail "clone --dimension 8 of legacy: $(cat "$dir/out")"
same_as legacy cl
echo "a stream recording no dimension: refused without --dimension, cloned with it"

# ---- A snapshot of several chunks (dimension 8, incompressible contents).
A big init --dimension 8 >/dev/null
$py - >"$dir/big.jsonl" <<'EOF'
import json, random
r = random.Random(37)
for i in range(100):
    print(json.dumps({"op": "node", "key": "fact:big%d" % i, "type": "fact",
                      "content": r.getrandbits(4000).to_bytes(500, "big").hex(),
                      "vector": [round(r.uniform(-1, 1), 3) for _ in range(8)]}))
EOF
A big ingest "$dir/big.jsonl" >/dev/null
cluster_bind "$amem" "$dir/big" "$dir/add.out" --stream big --replicas 1 || exit 1
A big publish-snapshot --json >"$dir/ps.json" || fail "publish-snapshot: $(cat "$dir/ps.json")"
chunks=$(field chunks <"$dir/ps.json")
[[ $chunks -ge 3 ]] || fail "the snapshot has $chunks chunks, not several: $(cat "$dir/ps.json")"
for i in 1 2 3; do
  A big put-node "fact:tail$i" --type fact --content "after the snapshot $i" >/dev/null
done
"$amem" clone "$servers" --stream big "$dir/cb" >"$dir/out" 2>&1 || fail "clone of big: $(cat "$dir/out")"
grep -q "fetched snapshot rev-1-.* SHA-256 verified" "$dir/out" && grep -q "applied 3 revisions" "$dir/out" ||
  fail "clone of big: $(cat "$dir/out")"
same_as big cb
echo "a snapshot of $chunks chunks: cloned byte for byte"

# ---- A clone killed on the way leaves DIR absent or complete; a later one succeeds.
check_killed() {  # check_killed NAME WHAT: after a SIGKILLed clone into NAME
  local rc=0
  if [[ -e "$dir/$1" ]]; then
    same_as big "$1"  # complete, or it would not be there
    # A later clone into it is refused and removes the killed one's temporary.
    "$amem" clone "$servers" --stream big "$dir/$1" 2>"$dir/err" || rc=$?
    [[ $rc == 4 ]] && grep -q "$1 exists" "$dir/err" || fail "clone into a complete DIR: exit $rc, $(cat "$dir/err")"
  else
    "$amem" clone "$servers" --stream big "$dir/$1" >"$dir/out" 2>&1 ||
      fail "clone after one killed $2: $(cat "$dir/out")"
    same_as big "$1"
  fi
  ! compgen -G "$dir/$1.clone-tmp-*" >/dev/null || fail "the clone killed $2 left its temporary directory"
}
for stage in chunk:1 chunk:2 imported applied renamed; do
  name="k${stage/:/}"
  rc=0; { AMEM_REPLICATION_TEST_CLONE_DIE=$stage "$amem" clone "$servers" --stream big "$dir/$name" \
    >/dev/null 2>&1; } 2>/dev/null || rc=$?
  [[ $rc == 137 ]] || fail "the clone was not killed at $stage (exit $rc)"
  compgen -G "$dir/$name.clone-tmp-*" >/dev/null || fail "no temporary directory after a kill at $stage"
  case $stage in
    renamed) [[ -e "$dir/$name" ]] || fail "no DIR after a kill after the rename" ;;
    *) [[ ! -e "$dir/$name" ]] || fail "DIR exists after a kill at $stage" ;;
  esac
  check_killed "$name" "at $stage"
done
for t in $(seq 1 "$kill_trials"); do
  name=kr$t
  "$amem" clone "$servers" --stream big "$dir/$name" --batch 1 >/dev/null 2>&1 &
  victim=$!
  sleep "$($py -c "import random; print(random.Random($t).uniform(0.01, 0.4))")"
  kill -9 "$victim" 2>/dev/null || true
  wait "$victim" 2>/dev/null || true
  check_killed "$name" "at a random time"
done
echo "clones killed at chunk 1, chunk 2, after the import, the catch-up and the rename, and at random ($kill_trials SIGKILLs): DIR absent or complete"

# ---- A damaged chunk and a missing chunk in the object store: exit 5, nothing left.
obj=OBJ_amem-big-snapshots
last_seq() { js "$port" "\$JS.API.STREAM.INFO.$obj" | $py -c 'import json,sys; print(json.load(sys.stdin)["state"]["last_seq"])'; }
publish_new() {  # publish_new: one more revision and its snapshot; prints its first chunk's sequence
  local before
  before=$(last_seq)
  A big put-node "fact:more$RANDOM" --type fact --content more >/dev/null
  A big publish-snapshot >/dev/null || fail "publish-snapshot"
  echo $((before + 1))
}
delete_msg() {  # delete_msg SEQ
  js "$port" "\$JS.API.STREAM.MSG.DELETE.$obj" "{\"seq\":$1}" | grep -q '"success":true' ||
    fail "could not delete message $1"
}
first=$(publish_new)
# Chunk 2 replaced by a copy with one bit flipped (its place in the object changes too).
js "$port" "\$JS.API.STREAM.MSG.GET.$obj" "{\"seq\":$((first + 1))}" >"$dir/chunk.json"
delete_msg $((first + 1))
$py - "$dir/chunk.json" >"$dir/chunk.args" <<'EOF'
import base64, json, sys
m = json.load(open(sys.argv[1]))["message"]
data = bytearray(base64.b64decode(m["data"])); data[len(data) // 2] ^= 1
open(sys.argv[1] + ".bin", "wb").write(bytes(data))
print(m["subject"])
EOF
subject=$(cat "$dir/chunk.args")
js "$port" "$subject" "@$dir/chunk.json.bin" | grep -q '"seq"' || fail "could not publish the damaged chunk"
rc=0; "$amem" clone "$servers" --stream big "$dir/cd" 2>"$dir/err" || rc=$?
[[ $rc == 5 ]] && grep -q "SHA-256 is [0-9a-f]*, not the published" "$dir/err" ||
  fail "a damaged chunk: exit $rc, $(cat "$dir/err")"
nothing_left cd
first=$(publish_new)
delete_msg $((first + 1))
rc=0; "$amem" clone "$servers" --stream big "$dir/cm" --timeout-ms 1000 2>"$dir/err" || rc=$?
[[ $rc == 5 ]] && grep -q "chunk [0-9]* of [0-9]* did not come" "$dir/err" ||
  fail "a missing chunk: exit $rc, $(cat "$dir/err")"
nothing_left cm
echo "a damaged chunk and a missing chunk: exit 5, nothing left"
# ---- publish-snapshot --keep N: the bucket keeps the N newest snapshots.
# subjects KIND: how many subjects of the bucket's descriptions (M) or chunks (C) hold messages.
subjects() {
  js "$port" "\$JS.API.STREAM.INFO.$obj" "{\"subjects_filter\":\"\$O.amem-big-snapshots.$1.>\"}" |
    $py -c 'import json,sys; print(len(json.load(sys.stdin)["state"].get("subjects") or {}))'
}
[[ $(subjects M) == 3 && $(subjects C) == 3 ]] || fail "the bucket does not hold 3 snapshots: $(subjects M), $(subjects C)"
rc=0; A big publish-snapshot --keep 0 2>"$dir/err" || rc=$?
[[ $rc == 2 ]] && grep -q -- "--keep: at least 1" "$dir/err" || fail "--keep 0: exit $rc, $(cat "$dir/err")"
A big put-node fact:kept --type fact --content kept >/dev/null
A big publish-snapshot --keep 2 --json >"$dir/ps.json" || fail "publish-snapshot --keep 2: $(cat "$dir/ps.json")"
$py - "$dir/ps.json" <<'EOF2' || fail "--keep 2 deleted other snapshots: $(cat "$dir/ps.json")"
import json, sys
d = json.load(open(sys.argv[1]))
revs = [int(n.split("-")[1]) for n in d["deleted"]]
assert d["published_now"] and len(revs) == 2 and revs[1] == 1 and revs[0] > 1, d
EOF2
[[ $(subjects M) == 2 && $(subjects C) == 2 ]] || fail "--keep 2 left $(subjects M) descriptions, $(subjects C) chunk subjects"
rm -f "$dir/big.amem"
"$amem" clone "$servers" --stream big "$dir/ck" >"$dir/out" 2>&1 || fail "clone after --keep: $(cat "$dir/out")"
same_as big ck
A big publish-snapshot --keep 1 >"$dir/out" || fail "publish-snapshot --keep 1: $(cat "$dir/out")"
grep -q "snapshot already published: .*" "$dir/out" && grep -q "^deleted snapshot rev-[0-9]*-[0-9a-f]* (revision [0-9]*, --keep 1)" "$dir/out" ||
  fail "--keep 1: $(cat "$dir/out")"
[[ $(subjects M) == 1 && $(subjects C) == 1 ]] || fail "--keep 1 left $(subjects M) descriptions, $(subjects C) chunk subjects"
echo "publish-snapshot --keep 2, then --keep 1: the older snapshots deleted, chunks and all; the clone takes the newest"
echo "PASS replication_clone"
