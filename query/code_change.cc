#include "query/code_change.h"

namespace amem::query {

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kModified: return "modified";
    case ChangeKind::kAdded: return "added";
    case ChangeKind::kDeleted: return "deleted";
    case ChangeKind::kRenamed: return "renamed";
  }
  return "unknown";
}

}  // namespace amem::query
