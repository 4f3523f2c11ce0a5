// The revision log of a bound store on NATS JetStream (tools/cli/replication.h,
// docs/REPLICATION.md): a stream named after the binding, one subject
// (amem.<stream>.rev), file storage, `replicas` copies, deletes and purges denied.
// Linked into the amem executable only, and only when libnats was found.
#ifndef AMEM_TOOLS_REPLICATION_NATS_LOG_H_
#define AMEM_TOOLS_REPLICATION_NATS_LOG_H_

#include "tools/cli/replication.h"

namespace amem::replication {

// The factory tools/main.cc hands to cli::SetRevisionLogFactory.
cli::RevisionLogFactory NatsLogFactory();

}  // namespace amem::replication

#endif  // AMEM_TOOLS_REPLICATION_NATS_LOG_H_
