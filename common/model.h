// The data model's fixed vocabulary (docs/DESIGN.md §2): node types and built-in
// relations with their stable numbers, and the input limits every layer enforces.
#ifndef AMEM_COMMON_MODEL_H_
#define AMEM_COMMON_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace amem {

// Node types. The numbers are stable: they are the snapshot's event_type.
// 0-5 are the seed format's event types; 6-10 are amem's extension.
enum class NodeType : uint8_t {
  kFact = 0,
  kDecision = 1,
  kInference = 2,
  kCorrection = 3,
  kSkill = 4,  // a procedure
  kEpisode = 5,
  kConstraint = 6,
  kFile = 7,
  kSymbol = 8,
  kModule = 9,
  kEntity = 10,  // anything else; meta.kind says what
};
inline constexpr int kNodeTypeCount = 11;

// "fact", "decision", ... ; nullptr for an unknown number.
const char* NodeTypeName(NodeType type);
// Accepts the lower-case name ("skill" also as "procedure"); nullopt otherwise.
std::optional<NodeType> ParseNodeType(std::string_view name);
inline bool IsValidNodeType(uint32_t v) { return v < kNodeTypeCount; }

// Relation ids. 0-15 are built in with fixed numbers; custom relations are interned
// by the store from kFirstCustomRelation up. 16-63 are reserved.
using RelationId = uint8_t;
enum BuiltinRelation : RelationId {
  kCausedBy = 0,      // A caused_by B: effect -> cause
  kSupports = 1,      // A supports B: evidence -> claim
  kContradicts = 2,   // symmetric in meaning, stored as written
  kSupersedes = 3,    // A supersedes B: new -> old
  kRelatedTo = 4,
  kPartOf = 5,        // member -> whole
  kTemporalNext = 6,  // earlier -> later
  kDefines = 7,       // file -> symbol
  kReferences = 8,    // symbol -> symbol
  kCalls = 9,
  kImports = 10,      // module -> module
  kTests = 11,        // test -> code unit
  kImplements = 12,
  kConstrains = 13,   // constraint -> entity
  kDecidedFor = 14,   // decision -> entity/scope
  kDerivedFrom = 15,  // memory item -> tool result or file
};
inline constexpr int kBuiltinRelationCount = 16;
inline constexpr RelationId kFirstCustomRelation = 64;
inline constexpr int kMaxRelationId = 255;

// Name of a built-in relation; nullptr if `id` is not built in.
const char* BuiltinRelationName(RelationId id);
std::optional<RelationId> ParseBuiltinRelation(std::string_view name);
// Custom relation names: 1-64 bytes of [a-z0-9_], starting with a letter.
bool IsValidRelationName(std::string_view name);

// Limits on input (docs/DESIGN.md §9); larger input is InvalidArgument.
inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr size_t kMaxContentBytes = 1 << 20;     // 1 MiB per node
inline constexpr size_t kMaxMetaBytes = 64 << 10;       // 64 KiB of JSON
inline constexpr size_t kMaxPayloadBytes = 64 << 10;    // edge payload JSON
inline constexpr size_t kMaxKvValueBytes = 1 << 20;     // 1 MiB per kv value
inline constexpr size_t kMaxNameBytes = 256;            // scope, run, task, ns, kv key
inline constexpr uint32_t kDefaultDimension = 128;
inline constexpr uint32_t kMaxDimension = 4096;

}  // namespace amem

#endif  // AMEM_COMMON_MODEL_H_
