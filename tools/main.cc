// amem: the command line (tools/cli/command.h describes how commands are added).
#include "tools/cli/run.h"

#ifdef AMEM_WITH_NATS
#include "tools/replication/nats_log.h"
#endif

int main(int argc, char** argv) {
#ifdef AMEM_WITH_NATS
  // Bound stores (docs/REPLICATION.md) reach their stream through libnats.
  amem::cli::SetRevisionLogFactory(amem::replication::NatsLogFactory());
#endif
  return amem::cli::RunCli(argc, argv);
}
