# Replicas that follow a NATS JetStream stream (docs/REPLICATION.md): a real
# three-node nats-server cluster on loopback, started and stopped by the script
# (tests/replication/cluster_test.sh). Only when amem was built with libnats;
# tools/bootstrap.sh test installs it and nats-server.
# Writes per writer, fault rounds and the later rounds' writes per writer
# (cluster_test.sh): 3 x 1,000 at once in the normal build, then two more seeds at
# 3 x 100; under the sanitizers, where an amem process starts ten times slower, 40,
# then one more seed at 3 x 20.
if(NATS_FOUND)
  # clone_test.sh: clones SIGKILLed at random times.
  if(AMEM_SANITIZE)
    set(cluster_args 40 2 20)
    set(clone_kill_trials 1)
  else()
    set(cluster_args 1000 3 100)
    set(clone_kill_trials 3)
  endif()
  add_test(NAME replication_cluster
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/replication/cluster_test.sh
                   $<TARGET_FILE:amem> ${cluster_args})
  set_tests_properties(replication_cluster PROPERTIES TIMEOUT 900 LABELS "replication" COST 150)
  # amem clone (tests/replication/clone_test.sh): several-chunk snapshots, the stream's
  # dimension, clones SIGKILLed on the way, damaged and missing chunks, publish-snapshot
  # --keep. About 30 s in the normal build.
  add_test(NAME replication_clone
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/replication/clone_test.sh
                   $<TARGET_FILE:amem> ${clone_kill_trials})
  set_tests_properties(replication_clone PROPERTIES TIMEOUT 300 LABELS "replication" COST 30)
endif()
