#include "common/model.h"

namespace amem {

namespace {
constexpr const char* kTypeNames[kNodeTypeCount] = {
    "fact",  "decision",   "inference", "correction", "skill", "episode",
    "constraint", "file", "symbol",    "module",     "entity"};

constexpr const char* kRelationNames[kBuiltinRelationCount] = {
    "caused_by",  "supports", "contradicts", "supersedes", "related_to", "part_of",
    "temporal_next", "defines", "references", "calls",   "imports",    "tests",
    "implements", "constrains", "decided_for", "derived_from"};
}  // namespace

const char* NodeTypeName(NodeType type) {
  auto v = static_cast<unsigned>(type);
  return v < kNodeTypeCount ? kTypeNames[v] : nullptr;
}

std::optional<NodeType> ParseNodeType(std::string_view name) {
  for (int i = 0; i < kNodeTypeCount; ++i) {
    if (name == kTypeNames[i]) return static_cast<NodeType>(i);
  }
  if (name == "procedure") return NodeType::kSkill;
  return std::nullopt;
}

const char* BuiltinRelationName(RelationId id) {
  return id < kBuiltinRelationCount ? kRelationNames[id] : nullptr;
}

std::optional<RelationId> ParseBuiltinRelation(std::string_view name) {
  for (int i = 0; i < kBuiltinRelationCount; ++i) {
    if (name == kRelationNames[i]) return static_cast<RelationId>(i);
  }
  return std::nullopt;
}

bool IsValidRelationName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace amem
