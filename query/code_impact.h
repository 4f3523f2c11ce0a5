// impact --diff: what a code change reaches (docs/CODE.md §5), a mode of query 4
// (docs/QUERIES.md #4). The changed lines are mapped onto the code graph `amem
// index` writes (docs/CODE.md §1-§3), the walk goes backwards over code edges, and
// the answer lists the changed code, the code that depends on it, the tests among
// them and the memories (decisions, constraints, facts...) linked to any of it.
//
// Choices where docs/CODE.md is silent:
//   - a line is changed in the innermost symbols holding it: those whose `lines`
//     range is the shortest among the file's symbols that hold it (all of them
//     when several share that length); a symbol counts when `defines` links it to
//     the file and its meta `file`, if any, names that file;
//   - a modified file with no changed lines (binary, mode only) changes its file
//     node; a key with no live node (an added file, a file never indexed) is still
//     a changed row, with "in_graph": false;
//   - the walk follows code nodes only (file, symbol, module); each is reached
//     once, at its smallest depth, through the first edge met when each level is
//     expanded in key order (relations by id, sources by dense number);
//   - a test is a reached node that is the source of a `tests` edge, or a symbol
//     whose file defines one (a test file, as the indexer marked it);
//   - one row per memory, for its nearest link: the smallest depth, then the code
//     node's key, then edges code -> memory before memory -> code, by relation id.
#ifndef AMEM_QUERY_CODE_IMPACT_H_
#define AMEM_QUERY_CODE_IMPACT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "query/code_change.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::query {

// Which end the memories' links are found from. Both give the same answer; kAuto
// takes the one that reads less (tests and benchmarks name the others).
enum class MemoryScan { kAuto, kFromCode, kFromMemories };

struct CodeImpactOptions {
  uint32_t depth = 3;
  size_t limit = 100;  // rows per list; the counts cover everything
  MemoryScan memory_scan = MemoryScan::kAuto;
};

struct ChangedCode {
  std::string key;
  std::optional<uint32_t> node;  // the live node; nullopt when the graph has none
  ChangeKind change = ChangeKind::kModified;
  std::vector<LineSpan> lines;  // the changed old lines that fell to it, ascending
};

struct ReachedCode {
  uint32_t node = 0;
  uint32_t depth = 0;  // 0 for a changed node
  uint32_t edge = 0;   // the edge that reached it (it is the edge's source); unset at depth 0
};

struct LinkedMemory {
  uint32_t memory = 0;
  uint32_t code = 0;
  uint32_t depth = 0;  // the code node's
  uint32_t edge = 0;
  bool outgoing = false;  // memory -> code
};

struct CodeImpactResult {
  uint32_t files = 0;  // file changes in the input
  std::vector<ChangedCode> changed;   // by key
  std::vector<ReachedCode> affected;  // by (depth, key)
  std::vector<ReachedCode> tests;     // by (depth, key)
  std::vector<LinkedMemory> memories;  // by (depth, memory key)
  // Before the limit.
  size_t changed_count = 0, affected_count = 0, tests_count = 0, memories_count = 0;
  bool truncated = false;
};

CodeImpactResult CodeImpact(const snapshot::Reader& reader, const std::vector<FileChange>& changes,
                            const CodeImpactOptions& options);
Json CodeImpactJson(const snapshot::Reader& reader, const CodeImpactResult& result,
                    const CodeImpactOptions& options);

// Cuts the rows of `doc`'s arrays `fields` (kept in that priority: all of the
// first before any of the second...) until Render(doc, format) takes at most
// budget_tokens tokens (ceil(bytes / 4)); sets "truncated" when it cut. 0: no
// limit. InvalidArgument naming the minimum when the document without rows does
// not fit.
Status CutToTokenBudget(Json* doc, const std::vector<std::string>& fields, Format format,
                        size_t budget_tokens);

}  // namespace amem::query

#endif  // AMEM_QUERY_CODE_IMPACT_H_
