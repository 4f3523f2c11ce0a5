// Input validation for batch operations (docs/DESIGN.md §9, docs/STORE.md §6). Each
// function returns InvalidArgument naming the field; Apply prefixes "op N: ".
#ifndef AMEM_STORE_INTERNAL_VALIDATE_H_
#define AMEM_STORE_INTERNAL_VALIDATE_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "store/store.h"

namespace amem::store_internal {

// A node key: 1..kMaxKeyBytes bytes of valid UTF-8.
Status ValidateNodeKey(std::string_view field, std::string_view key);
// scope/run/task (may be empty) and kv scope/ns/key (may not): <= kMaxNameBytes,
// valid UTF-8, no NUL byte.
Status ValidateName(std::string_view field, std::string_view name, bool allow_empty);
// A JSON object whose values are all strings, as sorted, compact JSON. "" is "{}".
Status CanonicalMeta(std::string_view text, std::string* out);
// Any JSON value <= kMaxPayloadBytes, canonicalised. "" is "{}".
Status CanonicalPayload(std::string_view text, std::string* out);

Status ValidateNode(const NodeInput& node, uint32_t dimension, std::string* meta);
Status ValidateEdge(const EdgeInput& edge, std::string* payload);
Status ValidateKv(const KvInput& kv);
// For the delete ops: the identifying fields only.
Status ValidateKvName(const KvInput& kv);

}  // namespace amem::store_internal

#endif  // AMEM_STORE_INTERNAL_VALIDATE_H_
