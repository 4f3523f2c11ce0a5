// Orphaned memories (query/orphans.h): links of live memories to file: and
// symbol: keys with no live node, in either direction, and nothing else.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "query/orphans.h"
#include "tests/query/fixture.h"

namespace amem::query {
namespace {

using testing::GraphFixture;

std::vector<std::string> Rows(const std::vector<OrphanLink>& links) {
  std::vector<std::string> out;
  for (const OrphanLink& l : links) {
    out.push_back(l.memory.key + " " + l.code + " " + l.relation + " " +
                  (l.outgoing ? "out" : "in"));
  }
  return out;
}

TEST_CASE("orphans: memories linked to missing code, both directions, sorted",
          "[query][orphans]") {
  GraphFixture g;
  g.Node("file:live.cc", NodeType::kFile, "live.cc");
  g.Node("symbol:live.cc#f", NodeType::kSymbol, "function f");
  g.Edge("file:live.cc", "defines", "symbol:live.cc#f");
  g.Node("decision:b", NodeType::kDecision, "about f");
  g.Edge("decision:b", "decided_for", "symbol:live.cc#f");  // live: not an orphan
  g.Edge("decision:b", "decided_for", "symbol:gone.cc#g");
  g.Edge("decision:b", "related_to", "file:gone.cc");
  g.Node("constraint:a", NodeType::kConstraint, "g must not allocate");
  g.Edge("constraint:a", "constrains", "symbol:gone.cc#g");
  g.Node("fact:c", NodeType::kFact, "g reads c");
  g.Edge("symbol:gone.cc#g", "references", "fact:c");  // code -> memory
  g.Edge("fact:c", "related_to", "entity:never");      // a stub, but not code
  // Code linked to missing code is the index's business, not an orphan.
  g.Edge("symbol:live.cc#f", "calls", "symbol:gone.cc#g");
  auto r = g.Open();
  CHECK(Rows(Orphans(*r)) == std::vector<std::string>{
                                 "constraint:a symbol:gone.cc#g constrains out",
                                 "decision:b file:gone.cc related_to out",
                                 "decision:b symbol:gone.cc#g decided_for out",
                                 "fact:c symbol:gone.cc#g references in",
                             });
  GraphFixture empty;
  CHECK(Orphans(*empty.Open()).empty());
}

}  // namespace
}  // namespace amem::query
