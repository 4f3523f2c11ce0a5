# A three-node nats-server cluster with JetStream on free loopback ports, for
# tests/replication/cluster_test.sh and bench/replication_bench.sh. Sourced, not run:
#
#   dir=$(mktemp -d ...); pids=()      # the caller's directory and its processes
#   source tests/replication/cluster_lib.sh
#   cluster_start                       # sets servers, ports, node_pid; appends to pids
#   start_node I                        # (re)start node I (0..2), e.g. after kill -9
#   cluster_bind AMEM STORE OUT ARGS... # amem remote add "$servers" ARGS..., retried
#                                       # until the cluster has elected its leaders
#   cluster_kill                        # SIGKILL every process in pids
#
# Or, for a test script, all of it at once: cluster_test_setup NAME AMEM makes dir
# (/tmp/amem-NAME.XXXXXX), traps EXIT to stop the cluster and remove dir (kept with
# AMEM_KEEP_TEST_DIR=1), starts the cluster and defines fail MESSAGE and A STORE ARGS
# (amem --store $dir/STORE ARGS).
#
# The caller stops the cluster: trap a function that calls cluster_kill on EXIT.
command -v nats-server >/dev/null ||
  { echo "FAIL: nats-server is missing (bash tools/bootstrap.sh test installs it)"; exit 1; }

# Six free loopback ports: three clients, three routes.
cluster_ports() {
  read -r -a ports <<<"$(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(6)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')"
}

node_pid=()
start_node() {  # start_node I (0..2)
  local i=$1
  local routes="nats-route://127.0.0.1:${ports[3]}, nats-route://127.0.0.1:${ports[4]}, nats-route://127.0.0.1:${ports[5]}"
  mkdir -p "$dir/n$i"
  cat >"$dir/n$i.conf" <<EOF
server_name: n$i
listen: 127.0.0.1:${ports[$i]}
jetstream { store_dir: "$dir/n$i" }
cluster {
  name: amemtest
  listen: 127.0.0.1:${ports[$((i + 3))]}
  routes: [$routes]
}
EOF
  nats-server -c "$dir/n$i.conf" >>"$dir/n$i.log" 2>&1 &
  node_pid[$i]=$!
  pids+=($!)
}

cluster_start() {
  cluster_ports
  local i
  for i in 0 1 2; do start_node "$i"; done
  servers="nats://127.0.0.1:${ports[0]},nats://127.0.0.1:${ports[1]},nats://127.0.0.1:${ports[2]}"
}

# The cluster elects its JetStream leaders within seconds: bind when it is ready.
cluster_bind() {  # cluster_bind AMEM STORE OUT [remote add flags...]
  local amem=$1 store=$2 out=$3 try
  for try in $(seq 1 40); do
    if "$amem" --store "$store" remote add "$servers" "${@:4}" >"$out" 2>&1; then return 0; fi
    sleep 0.5
  done
  cat "$out"; tail -30 "$dir"/n*.log
  echo "FAIL: no stream after 40 tries"
  return 1
}

cluster_kill() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}

cluster_test_cleanup() {
  cluster_kill
  if [[ -n ${AMEM_KEEP_TEST_DIR:-} ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
fail() { echo "FAIL: $*"; exit 1; }
A() { "$amem" --store "$dir/$1" "${@:2}"; }

cluster_test_setup() {  # cluster_test_setup NAME AMEM
  dir=$(mktemp -d "/tmp/amem-$1.XXXXXX")
  amem=$2
  pids=()
  trap cluster_test_cleanup EXIT
  cluster_start
  export AMEM_NATS_TIMEOUT_MS=4000
}
