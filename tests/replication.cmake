# Replicas that follow a NATS JetStream stream (docs/REPLICATION.md): a real
# three-node nats-server cluster on loopback, started and stopped by the script
# (tests/replication/cluster_test.sh). Only when amem was built with libnats;
# tools/bootstrap.sh test installs it and nats-server.
if(NATS_FOUND)
  add_test(NAME replication_cluster
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/replication/cluster_test.sh
                   $<TARGET_FILE:amem>)
  set_tests_properties(replication_cluster PROPERTIES TIMEOUT 300 LABELS "replication" COST 150)
endif()
