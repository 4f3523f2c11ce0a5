// Batch::Op: one queued operation (internal to store/ and to code that inspects a
// batch, e.g. the CLI's ingest). The kind says which member of `input` is used:
//   kPutNode: NodeInput          kDeleteNode: NodeInput (key only)
//   kPutEdge: EdgeInput          kDeleteEdge: EdgeInput (src, rel, dst only)
//   kPutKv: KvInput              kDeleteKv: KvInput (scope, ns, key only)
//   kDefineRelation: EdgeInput whose `rel` is the name
#ifndef AMEM_STORE_BATCH_H_
#define AMEM_STORE_BATCH_H_

#include <variant>

#include "store/store.h"

namespace amem {

struct Batch::Op {
  using Kind = Change::Kind;
  Kind kind = Kind::kPutNode;
  std::variant<NodeInput, EdgeInput, KvInput> input;

  const NodeInput& node() const { return std::get<NodeInput>(input); }
  const EdgeInput& edge() const { return std::get<EdgeInput>(input); }
  const KvInput& kv() const { return std::get<KvInput>(input); }
};

}  // namespace amem

#endif  // AMEM_STORE_BATCH_H_
