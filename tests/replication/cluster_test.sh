#!/usr/bin/env bash
# Replicas that follow a NATS JetStream stream (docs/REPLICATION.md), against a real
# three-node nats-server cluster with JetStream on free loopback ports in a temporary
# directory, started (tests/replication/cluster_lib.sh) and always stopped by this script.
#
#   cluster_test.sh AMEM [WRITES_PER_WRITER [ROUNDS [ROUND_WRITES]]]
#                                    (defaults 40, 3, a tenth of WRITES_PER_WRITER, >= 20)
#
# ctest replication_cluster passes 1000 3 100 in the normal build: three stores write
# 3 x 1,000 revisions at once through the CLI, and `amem mcp` 250 more on the first
# (a quarter of the writes per writer, at least 40), then the fault scenario runs
# twice more with 3 x 100; 40 2 20 under the sanitizers, where each amem process
# starts ten times slower.
#
# The fault scenario's random choices come from a seed, printed with each round:
# AMEM_REPLICATION_SEED when set, else a random one; round K uses the seed plus
# K - 1. A failure prints the seed of the round it failed in and the command that
# runs that round alone (AMEM_REPLICATION_SEED=S cluster_test.sh AMEM WRITES 1).
#
# Checks: a stream of three replicas made by `amem remote add`; three bound stores
# writing at once with overlapping keys (CLI put-node, kv-put, put-edge and
# ingest, and `amem mcp`'s remember on one of them) while one NATS node is
# SIGKILLed and restarted, a follower is SIGKILLed and restarted, and writers are
# SIGKILLed after their publish and before it; afterwards
# `amem sync` on every store gives identical `amem export` bytes, the log holds
# every acknowledged write exactly once and nothing else but writes whose publish
# got no answer; a writer killed between the stream's acknowledgement and its local
# commit loses nothing and doubles nothing; one killed before its publish changes
# nothing, here or in the stream; a replica killed mid-catch-up resumes from its own
# revision and converges; replicas at one revision agree on the export digest one of
# them published (amem verify-replica) and one altered outside the stream does not;
# a clone (amem clone) from a published snapshot (amem publish-snapshot) plus the
# stream's tail exports the source's bytes and refuses reads before the snapshot, one
# with none published replays the stream, forged snapshots (a damaged chunk, a wrong
# digest) and an unreachable stream are refused leaving nothing behind;
# `amem follow` exits 0 on SIGTERM; a
# store ahead of its stream, or whose history differs from a stream's, refuses; a
# foreign message stops sync naming its sequence; with the stream unreachable a
# write fails clearly and the store is unchanged. AMEM_KEEP_TEST_DIR=1 keeps the
# temporary directory (servers' logs, the writers' outcomes in acks).
set -euo pipefail
amem=$(realpath "$1")
writes=${2:-40}
rounds=${3:-3}
round_writes_more=${4:-$((writes / 10 > 20 ? writes / 10 : 20))}
seed=${AMEM_REPLICATION_SEED:-$((SRANDOM % 1000000))}
[[ $seed =~ ^[0-9]+$ ]] || { echo "FAIL: AMEM_REPLICATION_SEED=$seed: a number expected"; exit 1; }
round=0 round_seed= round_writes=$writes
py=/usr/bin/python3
source "$(dirname "$0")/cluster_lib.sh"  # cluster_start, start_node, cluster_bind

cluster_test_setup replication "$amem"  # dir, the cluster, fail, A
cleanup() {
  local rc=$?
  if (( rc != 0 )); then
    echo "FAILED with seeds $seed to $((seed + rounds - 1))${round_seed:+, in fault round $round (seed $round_seed, $round_writes writes per writer); run that round first: AMEM_REPLICATION_SEED=$round_seed bash $0 AMEM $round_writes 1}"
  fi
  cluster_test_cleanup
}
trap cleanup EXIT
rev() { A "$1" stats --json | $py -c 'import json,sys; print(json.load(sys.stdin)["revision"])'; }

for s in s1 s2 s3 s4 other; do A $s init >/dev/null; done

cluster_bind "$amem" "$dir/s1" "$dir/add.out" --stream team --replicas 3 || exit 1
grep -q "created stream team (subject amem.team.rev, 3 replicas)" "$dir/add.out" ||
  fail "remote add: $(cat "$dir/add.out")"
A s1 remote show --json | grep -q '"subject":"amem.team.rev"' || fail "remote show"
for s in s2 s3 s4; do
  A $s remote add "$servers" --stream team >/dev/null || fail "$s did not bind"
done
# Bound again, or to a stream whose history differs: refused.
A s1 remote add "$servers" --stream elsewhere 2>"$dir/err" && fail "bound twice"
grep -q "already bound to stream team" "$dir/err" || fail "bound twice: $(cat "$dir/err")"
A other put-node fact:other --type fact --content 'not the team history' >/dev/null
A other remote add "$servers" --stream lone >/dev/null || fail "other did not bind to lone"
# A new store bound to lone catches up from nothing.
A s5 init >/dev/null
A s5 remote add "$servers" --stream lone >/dev/null || fail "s5 did not bind to lone"
A s5 sync >/dev/null || fail "s5 sync"
A other export "$dir/other.amem" >/dev/null; A s5 export "$dir/s5.amem" >/dev/null
cmp -s "$dir/other.amem" "$dir/s5.amem" || fail "s5 exports other bytes than its source"
# A store that went ahead of its stream (written while unbound) refuses to sync.
cp "$dir/other/remote.json" "$dir/remote.json.saved"
A other remote remove >/dev/null
A other put-node fact:other2 --type fact --content 'written while unbound' >/dev/null
cp "$dir/remote.json.saved" "$dir/other/remote.json"
A other sync 2>"$dir/err" && fail "a store ahead of its stream synced"
grep -q "the store is at revision 2 but stream lone ends at sequence 1" "$dir/err" ||
  fail "ahead: $(cat "$dir/err")"
A other put-node fact:other3 --type fact --content x 2>"$dir/err" && fail "a store ahead of its stream wrote"
A other remote remove >/dev/null

# The fault scenario, once per seed (fault_round): three bound stores write at once
# while faults strike, then every store converges. The seed (bash's RANDOM, seeded
# with it) makes its random choices: the overlap of the writers' keys, which NATS
# node is SIGKILLed and restarted and after how many acknowledged writes, when and
# on which store a follower is SIGKILLed and restarted, and when and on which store
# a writer is SIGKILLed between the stream's acknowledgement and its local commit
# and one before its publish (during the run; again afterwards on a quiet store,
# where its store is checked unchanged), and when a replica is SIGKILLed
# mid-catch-up (catch_up_kill, below).
writer() {  # writer W STORE ACKS: WRITES_PER_WRITER writes, outcomes in ACKS
  local w=$1 s=$2 acks=$3 i out
  for i in $(seq 1 "$round_writes"); do
    case $((i % 4)) in
      0) out=$(A "$s" put-node "fact:k$((i % keys_node))" --type fact --content "w$w-$i" 2>&1) ;;
      1) out=$(A "$s" kv-put team keys "k$((i % keys_kv))" "w$w-$i" 2>&1) ;;
      2) out=$(A "$s" put-edge "fact:k$((i % keys_node))" related_to "fact:k$(((i + 1) % keys_node))" \
               --payload "{\"by\":\"w$w-$i\"}" 2>&1) ;;
      3) out=$(printf '{"op":"node","key":"fact:i%d","type":"fact","content":"w%s-%d"}\n' $((i % keys_ingest)) "$w" "$i" |
               A "$s" ingest - 2>&1) ;;
    esac && echo "$w $i ok" >>"$acks" || echo "$w $i fail ${out//$'\n'/ }" >>"$acks"
  done
}
# A fourth writer: `amem mcp` on a store, its tool `remember` (one server, many calls).
mcp_writer() {  # mcp_writer STORE ACKS
  local i mcp_writes=$((round_writes / 4 > 40 ? round_writes / 4 : 40))
  {
    echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"cluster_test","version":"1"}}}'
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    for i in $(seq 1 "$mcp_writes"); do
      printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"namespace":"decisions","key":"k%d","value":"w4-%d"}}}\n' \
        "$i" $((i % keys_kv)) "$i"
      sleep 0.05
    done
  } | "$amem" --store "$dir/$1" mcp >"$dir/$1.mcp.out" 2>"$dir/$1.mcp.err"
  # The other writers append to ACKS meanwhile, a line a write: all of these lines go
  # in one write, so that none is split by theirs (a buffered print could be).
  $py - "$dir/$1.mcp.out" "$2" <<'PYEOF'
import json, os, sys
lines = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if not d.get("id"):
        continue
    r = d.get("result")
    ok = r is not None and not r.get("isError")
    text = json.dumps(d.get("error") or (r or {}).get("content"))
    lines.append("4 %d %s\n" % (d["id"], "ok" if ok else "fail " + text.replace("\n", " ")))
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND)
data = "".join(lines).encode()
assert os.write(fd, data) == len(data)
os.close(fd)
PYEOF
}
# A writer SIGKILLed by a fault hook during the run: killed (exit 137) after the
# stream's acknowledgement, its write must be in the stream once; killed before its
# publish, never. A write that failed without reaching the hook is an ordinary failure.
hooked_write() {  # hooked_write AFTER|BEFORE STORE W I ACKS
  local rc=0 out
  out=$(env "AMEM_REPLICATION_TEST_DIE_$1_PUBLISH=1" "$amem" --store "$dir/$2" put-node \
        "fact:hooked-$3" --type fact --content "w$3-$4" 2>&1) || rc=$?
  [[ $rc != 0 ]] || fail "the fault hook did not kill the writer ($1 its publish)"
  if [[ $rc == 137 && $1 == AFTER ]]; then echo "$3 $4 ok" >>"$5"
  elif [[ $rc == 137 ]]; then echo "$3 $4 fail killed before its publish" >>"$5"
  else echo "$3 $4 fail ${out//$'\n'/ }" >>"$5"; fi
}

fault_round() {  # fault_round SEED WRITES STREAM P: stores P1..P4 bound to STREAM
  local stream=$3 p=$4 acks="$dir/$4.acks" s at what before
  round_seed=$1 round_writes=$2 round=$((round + 1))
  RANDOM=$round_seed
  keys_node=$((2 + RANDOM % 8)) keys_kv=$((2 + RANDOM % 6)) keys_ingest=$((1 + RANDOM % 4))
  local node=$((RANDOM % 3)) follower=$((1 + RANDOM % 3))
  # The quiet store checks its own revision: not the one whose follower is restarted.
  local after_store=$((1 + RANDOM % 3)) before_store=$((1 + RANDOM % 3))
  local victim=$(((follower + RANDOM % 2) % 3 + 1)) started=$SECONDS
  # Acknowledged CLI writes before each fault: between a quarter and two thirds of
  # the run's 3 x WRITES.
  local span=$((round_writes * 2 - round_writes / 4))
  local node_at=$((round_writes / 4 + RANDOM % span)) follower_at=$((round_writes / 4 + RANDOM % span))
  local after_at=$((round_writes / 4 + RANDOM % span)) before_at=$((round_writes / 4 + RANDOM % span))
  echo "fault round $round of $rounds: seed $round_seed, $round_writes writes per writer on stream $stream;" \
    "keys $keys_node/$keys_kv/$keys_ingest; NATS node $node killed after $node_at writes," \
    "the follower on ${p}$follower after $follower_at; writers killed after their publish" \
    "on ${p}$after_store after $after_at, before it on ${p}$before_store after $before_at;" \
    "then both again on ${p}$victim"
  if [[ $p != s ]]; then
    for s in 1 2 3 4; do A "$p$s" init >/dev/null; done
    cluster_bind "$amem" "$dir/${p}1" "$dir/$p.add.out" --stream "$stream" || exit 1
    for s in 2 3 4; do
      A "$p$s" remote add "$servers" --stream "$stream" >/dev/null || fail "$p$s did not bind to $stream"
    done
  fi
  # A follower on P4 for the whole run; one on another store is SIGKILLed mid-run.
  "$amem" --store "$dir/${p}4" follow --interval-ms 50 >"$dir/$p.follow4.out" 2>"$dir/$p.follow4.err" &
  local follow4=$!; pids+=($follow4)
  "$amem" --store "$dir/$p$follower" follow --interval-ms 50 >/dev/null 2>"$dir/$p.follow.err" &
  local follow=$!; pids+=($follow)

  # Three writers at once, overlapping keys: every write's content is unique (wW-I),
  # its outcome recorded as "W I ok" or "W I fail <message>".
  touch "$acks"
  writer 1 "${p}1" "$acks" & local w1=$!
  writer 2 "${p}2" "$acks" & local w2=$!
  writer 3 "${p}3" "$acks" & local w3=$!
  mcp_writer "${p}1" "$acks" & local w4=$!
  pids+=($w1 $w2 $w3 $w4)
  while read -r at what <&3; do
    while [[ $(wc -l <"$acks") -lt $at ]]; do sleep 0.1; done
    case $what in
      node)
        kill -9 "${node_pid[$node]}" || fail "NATS node $node was not running: $(tail -5 "$dir/n$node.log")"
        sleep 1
        start_node "$node" ;;
      follower)
        kill -9 "$follow" || fail "the follower on $p$follower was not running: $(cat "$dir/$p.follow.err")"
        "$amem" --store "$dir/$p$follower" follow --interval-ms 50 >/dev/null 2>"$dir/$p.follow.err" &
        follow=$!; pids+=($follow) ;;
      after) hooked_write AFTER "$p$after_store" 8 1 "$acks" ;;
      before) hooked_write BEFORE "$p$before_store" 8 2 "$acks" ;;
    esac
  done 3< <(printf '%d node\n%d follower\n%d after\n%d before\n' \
             "$node_at" "$follower_at" "$after_at" "$before_at" | sort -n)
  wait $w1 $w2 $w3 $w4

  # On a quiet store: a writer SIGKILLed after the stream acknowledged its
  # revision, before its commit, commits nothing locally and its write is in the
  # stream once; one SIGKILLed with its revision written locally but not yet
  # published leaves the store unchanged, and the stream never holds the write.
  s=$p$victim
  A "$s" sync >/dev/null
  before=$(rev "$s")
  AMEM_REPLICATION_TEST_DIE_AFTER_PUBLISH=1 A "$s" put-node fact:killed --type fact --content 'w9-1' \
    >/dev/null 2>&1 && fail "the fault hook did not kill the writer"
  [[ $(rev "$s") == "$before" ]] || fail "the killed writer committed locally"
  echo "9 1 ok" >>"$acks"  # in the stream: the write must appear exactly once
  A "$s" put-node fact:after-kill --type fact --content 'w9-2' >/dev/null || fail "write after the kill"
  echo "9 2 ok" >>"$acks"
  A "$s" export "$dir/before-kill.amem" >/dev/null
  before=$(rev "$s")
  AMEM_REPLICATION_TEST_DIE_BEFORE_PUBLISH=1 A "$s" put-node fact:unsent --type fact --content 'w9-3' \
    >/dev/null 2>&1 && fail "the fault hook did not kill the writer before its publish"
  A "$s" export "$dir/after-kill.amem" >/dev/null
  cmp -s "$dir/before-kill.amem" "$dir/after-kill.amem" || fail "the writer killed before its publish changed the store"
  A "$s" sync >/dev/null || fail "sync after the kill before publish"
  [[ $(rev "$s") == "$before" ]] || fail "the stream holds the write killed before its publish"
  echo "9 3 fail killed before its publish" >>"$acks"  # the log check: not in the log

  kill -TERM "$follow"
  wait "$follow" || fail "follow did not exit 0 on SIGTERM: $(cat "$dir/$p.follow.err")"
  for s in 1 2 3 4; do A "$p$s" sync >/dev/null || fail "sync $p$s"; done
  kill -TERM "$follow4"
  wait "$follow4" || fail "follow on ${p}4 exited $? ($(cat "$dir/$p.follow4.err"))"
  grep -q "applied" "$dir/$p.follow4.out" || fail "follow printed no summary"

  for s in 1 2 3 4; do A "$p$s" export "$dir/$p$s.amem" >/dev/null; done
  for s in 2 3 4; do
    cmp -s "$dir/${p}1.amem" "$dir/$p$s.amem" || fail "$p$s exports other bytes than ${p}1"
  done
  A "${p}1" log >"$dir/$p.log.jsonl"
  $py - "$dir/$p.log.jsonl" "$acks" <<'EOF' || fail "the log and the acknowledged writes disagree"
import json, re, sys
revs, seen = set(), {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    revs.add(d["rev"])
    text = json.dumps(d)
    for m in set(re.findall(r'w(\d+)-(\d+)', text)):
        seen.setdefault(m, set()).add(d["rev"])
acks = {}
for line in open(sys.argv[2]):
    w, i, status = line.split(" ", 3)[:3]
    acks[(w, i)] = line.strip()
ok = {k for k, v in acks.items() if v.split(" ")[2] == "ok"}
bad = 0
for k in ok:
    if len(seen.get(k, ())) != 1:
        print("acknowledged write %s-%s is in %d revisions" % (k[0], k[1], len(seen.get(k, ())))); bad = 1
for k, r in seen.items():
    if k not in ok:
        why = acks.get(k, "never written")
        if "may or may not" not in why:
            print("write %s-%s is in the log but was not acknowledged: %s" % (k[0], k[1], why)); bad = 1
    if len(r) != 1:
        print("write %s-%s is in %d revisions" % (k[0], k[1], len(r))); bad = 1
# Revisions: the team relation-free history holds one write per revision.
if len(revs) != len(seen):
    print("%d revisions for %d writes" % (len(revs), len(seen))); bad = 1
fails = len(acks) - len(ok)
print("writes %d, acknowledged %d, failed %d, revisions %d" % (len(acks), len(ok), fails, len(revs)))
sys.exit(bad)
EOF
  catch_up_kill
  echo "fault round $round: $((SECONDS - started)) s"
}

# A replica SIGKILLed mid-catch-up (sync applying a 600-revision stream 10 revisions
# a transaction) resumes from its own revision and converges. The kill comes a
# random 0 to 20 ms after its store's file first changes (its first commit), again
# while it is at revision 0, and on a new store with the range halved when sync had
# finished.
$py - 600 >"$dir/tail.log" <<'EOF'
import json, sys
for r in range(1, int(sys.argv[1]) + 1):
    print(json.dumps({"rev": r, "rev_ts": 1700000000 + r, "op": "node", "key": "fact:t%d" % r,
                      "type": "fact", "content": "tail %d" % r, "meta": {},
                      "confidence": 1.0, "ts": 1700000000 + r}, separators=(",", ":")))
EOF
A src replay "$dir/tail.log" >/dev/null
A src remote add "$servers" --stream tail >/dev/null || fail "src did not bind to tail"
A src export "$dir/src.amem" >/dev/null
replica=0
catch_up_kill() {
  local range=20 killed_at=600 try mtime syncer
  # The fault round before restarted a node: stream tail may still be electing its
  # leader (a request then times out, more often under the sanitizers). Wait until
  # it answers, so that the kill below is the only fault here.
  for try in $(seq 1 40); do A src sync >/dev/null 2>&1 && break; sleep 0.5; done
  for try in $(seq 1 10); do
    if (( killed_at == 600 )); then
      replica=$((replica + 1))
      A "r$replica" init >/dev/null
      cluster_bind "$amem" "$dir/r$replica" "$dir/r.add.out" --stream tail || fail "r$replica did not bind"
    fi
    mtime=$(stat -c %y "$dir/r$replica/data.mdb")
    "$amem" --store "$dir/r$replica" sync --batch 10 >/dev/null 2>&1 & syncer=$!
    while [[ $(stat -c %y "$dir/r$replica/data.mdb") == "$mtime" ]] && kill -0 "$syncer" 2>/dev/null; do
      sleep 0.002
    done
    sleep "0.0$(printf %02d $((RANDOM % range)))"
    kill -9 "$syncer" 2>/dev/null || true
    wait "$syncer" 2>/dev/null || true
    killed_at=$(rev "r$replica")
    (( killed_at > 0 && killed_at < 600 )) && break
    (( killed_at == 600 && range > 1 )) && range=$((range / 2))
  done
  (( killed_at > 0 && killed_at < 600 )) || fail "sync was never killed mid-catch-up (last at $killed_at)"
  A "r$replica" sync >"$dir/resume.out" || fail "sync after the kill"
  grep -q "applied $((600 - killed_at)) revisions from stream tail; the store is at rev 600" \
    "$dir/resume.out" || fail "resume after the kill at $killed_at: $(cat "$dir/resume.out")"
  A "r$replica" export "$dir/resumed.amem" >/dev/null
  cmp -s "$dir/src.amem" "$dir/resumed.amem" || fail "the resumed replica exports other bytes"
  echo "killed mid-catch-up at revision $killed_at of 600 (try $try, replica $replica)"
}

# The first round: 3 x WRITES_PER_WRITER on stream team (whose stores s1..s4 the
# checks below use); then ROUNDS - 1 more with the next seeds and ROUND_WRITES each,
# each on a stream and stores of its own.
fault_round "$seed" "$writes" team s
for r in $(seq 2 "$rounds"); do
  fault_round $((seed + r - 1)) "$round_writes_more" "fault$r" "f${r}s"
done
round_seed=

# Export digests in the bucket amem-team-digests (amem verify-replica): s1 publishes
# its digest at its revision and the other replicas agree; none published is exit 3;
# a replica altered by a write outside the stream disagrees, exit 1.
r=$(rev s1)
A s1 verify-replica --publish >"$dir/vr.out" || fail "verify-replica --publish: $(cat "$dir/vr.out")"
grep -q "revision $r: published the store's export digest" "$dir/vr.out" ||
  fail "publish: $(cat "$dir/vr.out")"
for s in s2 s4; do
  A $s verify-replica --at "$r" >"$dir/vr.out" 2>&1 || fail "$s disagrees at $r: $(cat "$dir/vr.out")"
  grep -q "revision $r: the store's export matches the digest in bucket amem-team-digests" \
    "$dir/vr.out" || fail "verify $s: $(cat "$dir/vr.out")"
done
rc=0; A s2 verify-replica --at 1 2>"$dir/err" || rc=$?
[[ $rc == 3 ]] && grep -q "no export digest of revision 1 in bucket amem-team-digests" "$dir/err" ||
  fail "verify-replica with none published: exit $rc, $(cat "$dir/err")"
cp "$dir/s4/remote.json" "$dir/remote.json.saved"
A s4 remote remove >/dev/null
A s4 put-node fact:altered --type fact --content 'written while unbound' >/dev/null
cp "$dir/remote.json.saved" "$dir/s4/remote.json"
A s1 put-node fact:verified --type fact --content 'in the stream' >/dev/null || fail "write on s1"
A s1 verify-replica --publish >/dev/null || fail "verify-replica --publish at $((r + 1))"
rc=0; A s4 verify-replica --at $((r + 1)) >"$dir/vr.out" 2>&1 || rc=$?
[[ $rc == 1 ]] && grep -q "revision $((r + 1)): the store's export DIFFERS" "$dir/vr.out" ||
  fail "an altered replica: exit $rc, $(cat "$dir/vr.out")"
A s4 verify-replica --at "$r" >/dev/null || fail "the altered replica disagrees before the change"

# Bootstrap from a snapshot: s1 publishes its export (JetStream object store, bucket
# amem-team-snapshots); s2 at the same revision finds the same digest there; after
# more writes a clone fetches it, imports it at its revision, replays the tail, and
# exports s1's bytes, at the head and at the snapshot's revision; a read before that
# revision is refused; the clone is bound and writes through the stream.
A s2 sync >/dev/null || fail "s2 sync before the snapshot"
snap=$(rev s1)
A s1 publish-snapshot >"$dir/ps.out" || fail "publish-snapshot: $(cat "$dir/ps.out")"
grep -q "revision $snap: published snapshot rev-$snap-[0-9a-f]\{64\} (" "$dir/ps.out" ||
  fail "publish-snapshot: $(cat "$dir/ps.out")"
[[ $(rev s2) == "$snap" ]] || fail "s2 is not at $snap"
A s2 publish-snapshot >"$dir/ps2.out" || fail "publish-snapshot on s2: $(cat "$dir/ps2.out")"
grep -q "revision $snap: snapshot already published: rev-$snap-" "$dir/ps2.out" ||
  fail "the same revision from another replica: $(cat "$dir/ps2.out")"
for i in 1 2 3; do
  A s1 put-node "fact:after-snap$i" --type fact --content "after the snapshot $i" >/dev/null ||
    fail "write after the snapshot"
done
head=$(rev s1)
"$amem" clone "$servers" --stream team "$dir/c1/" >"$dir/clone.out" 2>&1 ||
  fail "clone: $(cat "$dir/clone.out")"
grep -q "fetched snapshot rev-$snap-.* SHA-256 verified.*imported it at revision $snap" \
  "$dir/clone.out" || fail "clone: $(cat "$dir/clone.out")"
grep -q "applied $((head - snap)) revisions from the stream; the store is at rev $head" \
  "$dir/clone.out" || fail "clone's tail: $(cat "$dir/clone.out")"
! compgen -G "$dir/c1.clone-tmp-*" >/dev/null || fail "clone left its temporary directory"
A s1 export "$dir/s1-head.amem" >/dev/null; A c1 export "$dir/c1-head.amem" >/dev/null
cmp -s "$dir/s1-head.amem" "$dir/c1-head.amem" || fail "the clone exports other bytes at $head"
A s1 export "$dir/s1-snap.amem" --as-of "$snap" >/dev/null
A c1 export "$dir/c1-snap.amem" --as-of "$snap" >/dev/null
cmp -s "$dir/s1-snap.amem" "$dir/c1-snap.amem" || fail "the clone exports other bytes at $snap"
A s1 verify-replica --publish >/dev/null || fail "verify-replica --publish at $head"
A c1 verify-replica --at "$head" >"$dir/vr.out" 2>&1 || fail "the clone disagrees: $(cat "$dir/vr.out")"
rc=0; A c1 get-node fact:verified --as-of $((snap - 1)) 2>"$dir/err" || rc=$?
[[ $rc == 4 ]] && grep -q "the store was imported from a snapshot of revision $snap; history before it is not in this store" \
  "$dir/err" || fail "a read before the snapshot: exit $rc, $(cat "$dir/err")"
A c1 remote show --json | grep -q '"stream":"team"' || fail "the clone is not bound"
A c1 put-node fact:from-clone --type fact --content 'written on the clone' >/dev/null ||
  fail "a write on the clone"
A s1 sync | grep -q "applied 1 revisions" || fail "s1 did not get the clone's write"
rc=0; "$amem" clone "$servers" --stream team "$dir/c1" 2>"$dir/err" || rc=$?
[[ $rc == 4 ]] && grep -q "c1 exists" "$dir/err" || fail "clone into an existing dir: exit $rc, $(cat "$dir/err")"
# No snapshot of stream tail: the clone replays the whole stream.
"$amem" clone "$servers" --stream tail "$dir/c2" >"$dir/clone2.out" 2>&1 ||
  fail "clone without a snapshot: $(cat "$dir/clone2.out")"
grep -q "no snapshot published in bucket amem-tail-snapshots: replaying the whole stream from revision 1" \
  "$dir/clone2.out" && grep -q "applied 600 revisions" "$dir/clone2.out" ||
  fail "clone without a snapshot: $(cat "$dir/clone2.out")"
A c2 export "$dir/c2.amem" >/dev/null
cmp -s "$dir/src.amem" "$dir/c2.amem" || fail "the clone of tail exports other bytes"
# Forged snapshots, newer than the real one (a foreign publisher on the bucket's
# subjects): a damaged chunk, then a wrong digest. Both refused, exit 5, nothing left.
forge() {  # forge KIND REV: a snapshot of revision REV from s1-snap.amem's bytes
  local ts
  ts=$(A s1 log --since-rev $(($2 - 1)) --until-rev "$2" | $py -c 'import json,sys; print(json.loads(sys.stdin.readline())["rev_ts"])')
  $py - "${ports[0]}" "$1" "$2" "$ts" "$dir/s1-snap.amem" <<'EOF' || fail "could not publish a forged snapshot"
import base64, hashlib, json, socket, sys
port, kind, rev, ts, path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
data = open(path, "rb").read()
damaged = bytearray(data); damaged[len(data) // 2] ^= 1; damaged = bytes(damaged)
real, other = hashlib.sha256(data).digest(), hashlib.sha256(damaged).digest()
chunk, digest = (damaged, real) if kind == "chunk" else (data, other)
nuid = "forged" + kind + rev
name = "rev-%s-%s" % (rev, digest.hex())
meta = json.dumps({"name": name, "headers": {"Amem-Revision": [rev], "Amem-Revision-Ts": [ts]},
                   "bucket": "amem-team-snapshots", "nuid": nuid, "size": len(chunk),
                   "chunks": 1, "digest": "SHA-256=" + base64.urlsafe_b64encode(digest).decode()}).encode()
subject = "$O.amem-team-snapshots.M." + base64.urlsafe_b64encode(name.encode()).decode()
s = socket.create_connection(("127.0.0.1", port))
s.recv(4096)
out = b'CONNECT {"verbose":false}\r\n'
out += b"PUB $O.amem-team-snapshots.C.%s %d\r\n" % (nuid.encode(), len(chunk)) + chunk + b"\r\n"
out += b"PUB %s %d\r\n" % (subject.encode(), len(meta)) + meta + b"\r\nPING\r\n"
s.sendall(out)
buf = b""
while b"PONG" not in buf: buf += s.recv(4096)
EOF
}
forge chunk $((snap + 1))
rc=0; "$amem" clone "$servers" --stream team "$dir/c3" 2>"$dir/err" || rc=$?
[[ $rc == 5 ]] && grep -q "snapshot rev-$((snap + 1))-.*SHA-256 is [0-9a-f]*, not the published" "$dir/err" ||
  fail "a damaged chunk: exit $rc, $(cat "$dir/err")"
[[ ! -e "$dir/c3" ]] && ! compgen -G "$dir/c3.clone-tmp-*" >/dev/null || fail "a refused clone left files behind"
forge digest $((snap + 2))
rc=0; "$amem" clone "$servers" --stream team "$dir/c3" 2>"$dir/err" || rc=$?
[[ $rc == 5 ]] && grep -q "snapshot rev-$((snap + 2))-.*not the published" "$dir/err" ||
  fail "a wrong digest: exit $rc, $(cat "$dir/err")"
[[ ! -e "$dir/c3" ]] && ! compgen -G "$dir/c3.clone-tmp-*" >/dev/null || fail "a refused clone left files behind"
echo "clone from the snapshot of revision $snap of $head: same bytes; forged snapshots refused"

# A replay into a bound store goes through the stream: the revisions the store has
# already are skipped, the rest published first, and another replica gets them.
A s1 sync >/dev/null
A s1 log >"$dir/full.log"
A fork replay "$dir/full.log" >/dev/null
A fork put-node fact:replayed-1 --type fact --content "replayed through the stream" >/dev/null
A fork put-edge fact:replayed-1 related_to fact:replayed-1 >/dev/null
A fork log >"$dir/fork.log"
head=$(rev s1)
out=$(A s1 replay "$dir/fork.log" --json) || fail "replay into a bound store"
[[ $out == *'"published":2'* && $out == *"\"skipped\":$head"* && $out == *'"stream":"team"'* ]] ||
  fail "replay into a bound store: $out"
A s2 sync >/dev/null
[[ $(rev s2) == $((head + 2)) ]] || fail "the replayed revisions did not reach s2"
A s1 export "$dir/s1-replayed.amem" >/dev/null
A s2 export "$dir/s2-replayed.amem" >/dev/null
cmp -s "$dir/s1-replayed.amem" "$dir/s2-replayed.amem" || fail "replayed stores differ"
# The same log again publishes nothing; a log of another history is refused.
[[ $(A s1 replay "$dir/fork.log" --json) == *'"published":0'* ]] || fail "a replay again published"
A other2 init >/dev/null
A other2 put-node fact:foreign --type fact >/dev/null
A other2 log >"$dir/foreign.log"
A s1 replay "$dir/foreign.log" 2>"$dir/err" && fail "a foreign log replayed"
grep -q "line 1: revision 1: differs from the store's revision 1" "$dir/err" || fail "replay: $(cat "$dir/err")"
[[ $(rev s1) == $((head + 2)) ]] || fail "a refused replay wrote"
echo "replay into a bound store: 2 revisions published, $head skipped; a foreign log refused"
# Revisions go to the stream without waiting for each answer: one the client cannot
# send (over the server's max_payload, 1 MiB) stops the replay there; those before it
# are in the stream and the store, and the error says so.
$py - >"$dir/big.log" <<'EOF'
import json
for r in range(1, 6):
    for k in range(200 if r == 3 else 1):  # revision 3: 200 nodes of 8 KB
        print(json.dumps({"rev": r, "rev_ts": 1700000000 + r, "op": "node",
                          "key": "fact:b%d-%d" % (r, k), "type": "fact",
                          "content": "x" * (8000 if r == 3 else 10), "meta": {},
                          "confidence": 1.0, "ts": 1700000000 + r}, separators=(",", ":")))
EOF
A big init >/dev/null
A big remote add "$servers" --stream big >/dev/null || fail "big did not bind"
A big replay "$dir/big.log" 2>"$dir/err" && fail "a revision over max_payload replayed"
grep -q "revision 3.*replay stopped after revision 2 (revisions 1..2 are in stream big and applied here" "$dir/err" ||
  fail "replay over max_payload: $(cat "$dir/err")"
[[ $(rev big) == 2 ]] || fail "replay over max_payload: the store is at $(rev big), not 2"
A bigr init >/dev/null
A bigr remote add "$servers" --stream big >/dev/null && A bigr sync >/dev/null || fail "bigr did not sync"
[[ $(rev bigr) == 2 ]] || fail "replay over max_payload: the stream holds $(rev bigr) revisions, not 2"
# Two replays of different logs into two stores bound to one new stream, at once:
# the stream's history is one of the two logs, whole, never a mix (a message sent
# before the one ahead of it was answered expects that one by its id), and the
# other replay stops, saying why.
for k in a b; do
  $py - "$k" >"$dir/race-$k.log" <<'EOF'
import json, sys
for r in range(1, 2001):
    print(json.dumps({"rev": r, "rev_ts": 1700000000 + r, "op": "node",
                      "key": "fact:%s%d" % (sys.argv[1], r), "type": "fact", "content": "c",
                      "meta": {}, "confidence": 1.0, "ts": 1700000000 + r}, separators=(",", ":")))
EOF
done
for race in 1 2 3; do  # the interleaving is up to timing: three streams
  for k in a b; do
    A "race$race$k" init >/dev/null
    A "race$race$k" remote add "$servers" --stream race$race >/dev/null || fail "race$race$k did not bind"
  done
  A "race${race}a" replay "$dir/race-a.log" >"$dir/race$race-a.out" 2>&1 &
  race_pid=$!
  rc_b=0; A "race${race}b" replay "$dir/race-b.log" >"$dir/race$race-b.out" 2>&1 || rc_b=$?
  rc_a=0; wait "$race_pid" || rc_a=$?
  (( rc_a == 0 || rc_b == 0 )) || fail "neither racing replay went in: $(cat "$dir/race$race-a.out" "$dir/race$race-b.out")"
  for k in a b; do
    A "race$race$k" sync >/dev/null || fail "race$race$k did not sync"
    A "race$race$k" log >"$dir/race$race-$k.stream.log"
  done
  cmp -s "$dir/race$race-a.stream.log" "$dir/race$race-b.stream.log" || fail "racing replays: the replicas differ"
  cmp -s "$dir/race$race-a.stream.log" "$dir/race-a.log" || cmp -s "$dir/race$race-a.stream.log" "$dir/race-b.log" ||
    fail "racing replays: the stream's history is neither log whole"
  grep -Eq "moved past revision|differs from the store's revision" "$dir/race$race-a.out" "$dir/race$race-b.out" ||
    (( rc_a == 0 && rc_b == 0 )) || fail "racing replays: $(cat "$dir/race$race-a.out" "$dir/race$race-b.out")"
  echo "two racing replays: exit $rc_a and $rc_b, the stream holds one log whole"
done

# amem mcp follows its store's binding while it runs: a write after `amem remote
# add` goes through the stream, one after `amem remote remove` stays local.
A mcpf init >/dev/null
mkfifo "$dir/mcpf.in"
"$amem" --store "$dir/mcpf" mcp <"$dir/mcpf.in" >"$dir/mcpf.out" 2>"$dir/mcpf.err" &
mcpf_pid=$!
exec 7>"$dir/mcpf.in"
echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"cluster_test","version":"1"}}}' >&7
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&7
mcpf_call() {  # mcpf_call ID: a `remember` call, waiting for its answer
  printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"namespace":"decisions","key":"k%d","value":"v%d"}}}\n' \
    "$1" "$1" "$1" >&7
  local _
  for _ in $(seq 1 200); do
    grep -Eq "\"id\":$1[,}]" "$dir/mcpf.out" && {
      grep -E "\"id\":$1[,}]" "$dir/mcpf.out" | grep -q '"isError":true' && fail "mcp call $1: $(cat "$dir/mcpf.out")"
      return 0
    }
    sleep 0.05
  done
  fail "amem mcp did not answer call $1: $(cat "$dir/mcpf.err")"
}
mcpf_call 1
A mcpf remote add "$servers" --stream mcpf >/dev/null || fail "mcpf did not bind"
mcpf_call 2
A mcpf remote remove >/dev/null
mcpf_call 3
exec 7>&-
wait "$mcpf_pid" || fail "amem mcp: $(cat "$dir/mcpf.err")"
A mcpr init >/dev/null
A mcpr remote add "$servers" --stream mcpf >/dev/null || fail "mcpr did not bind"
A mcpr sync >/dev/null
[[ $(rev mcpf) == 3 && $(rev mcpr) == 2 ]] || fail "mcp binding: mcpf $(rev mcpf), mcpr $(rev mcpr)"
echo "amem mcp followed its binding: one write through the stream, one local after remove"

# A binding to a stream that is gone: a write fails at once, naming it, and writes
# nothing (a writer publishes without asking for the stream first).
A gone init >/dev/null
printf '{"servers":["%s"],"stream":"gone","replicas":3}\n' "${servers%%,*}" >"$dir/gone/remote.json"
A gone put-node fact:a --type fact 2>"$dir/err" && fail "a write to a missing stream"
grep -q "stream gone does not exist at" "$dir/err" || fail "missing stream: $(cat "$dir/err")"
[[ $(rev gone) == 0 ]] || fail "a write to a missing stream wrote"

# A store whose history differs from team's does not bind to it.
A other remote add "$servers" --stream team 2>"$dir/err" && fail "a foreign history bound"
grep -q "the store's revision 1 differs from stream team, sequence 1" "$dir/err" ||
  fail "foreign history: $(cat "$dir/err")"
[[ ! -e "$dir/other/remote.json" ]] || fail "a refused binding was recorded"

# A foreign message on the subject: sync stops at it, naming its sequence.
last=$(rev s1)
$py - "${ports[0]}" <<'EOF' || fail "could not publish the foreign message"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.recv(4096)
s.sendall(b'CONNECT {"verbose":false}\r\nPUB amem.team.rev 11\r\nhello world\r\nPING\r\n')
buf = b""
while b"PONG" not in buf: buf += s.recv(4096)
EOF
A s1 sync 2>"$dir/err" && fail "sync applied a foreign message"
grep -q "stream team, sequence $((last + 1)): not an amem revision" "$dir/err" ||
  fail "foreign message: $(cat "$dir/err")"
[[ $(rev s1) == "$last" ]] || fail "the foreign message changed the store"
A s1 put-node fact:blocked --type fact --content x 2>"$dir/err" && fail "a write went past a foreign message"
grep -q "sequence $((last + 1))" "$dir/err" || fail "write after foreign: $(cat "$dir/err")"

# The stream unreachable: a write fails clearly and the store is unchanged.
A s2 export "$dir/before.amem" >/dev/null
for i in 0 1 2; do kill -9 "${node_pid[$i]}" 2>/dev/null || true; done
sleep 0.3
A s2 put-node fact:offline --type fact --content x 2>"$dir/err" && fail "a write succeeded with no stream"
grep -q "cannot reach stream team" "$dir/err" || fail "unreachable: $(cat "$dir/err")"
A s2 export "$dir/after.amem" >/dev/null
cmp -s "$dir/before.amem" "$dir/after.amem" || fail "a failed write changed the store"
A s2 get-node fact:offline >/dev/null 2>&1 && fail "the failed write is readable"
rc=0; "$amem" clone "$servers" --stream team "$dir/c9" 2>"$dir/err" || rc=$?
[[ $rc == 6 ]] && grep -q "cannot reach stream team" "$dir/err" ||
  fail "clone of an unreachable stream: exit $rc, $(cat "$dir/err")"
[[ ! -e "$dir/c9" ]] || fail "a clone of an unreachable stream left a directory"
echo "PASS replication_cluster"
