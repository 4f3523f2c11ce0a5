// The entity search block (docs/FORMAT.md §8.23, snapshot/entity_search.h): the
// writer lists every live entity by name and, for each gram of an entity's
// lowered name, type and observations, the entities holding it; the reader finds
// them lazily and reports damage where it reads it, never a different list.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "snapshot/entity_search.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

using snapshot_test::MakeEdge;
using snapshot_test::MakeNode;

std::string ObsKey(const std::string& entity, int k) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016x", 0xA0 + k);
  return "obs:" + entity + "#" + hex;
}

// The memory server's shapes: entities with a type in meta (entityType, kind, or
// none: the node type's name), their node's content their name (as the memory
// server writes it) or not (zeta), observations under them in two runs, an orphan
// observation (no entity), an observation of "A#B" that sorts among A's, a name
// that is a prefix of another, a deleted-looking stub entity (a dangling edge's
// endpoint), and a key that is neither. Plus the small state's nodes.
StoreState EntityState() {
  StoreState s = snapshot_test::SmallState();
  struct E {
    std::string name, meta;
    std::vector<std::string> observations;
  };
  const std::vector<E> entities = {
      {"Alpha", R"({"entityType":"Service"})", {"Retry policy: three times", "owns the Cache"}},
      {"A", R"({"kind":"module"})", {"short name"}},
      {"A#B", "{}", {"hash in the name"}},
      {"AB", R"({"entityType":"Person","seq":"2"})", {"Grüße aus Köln", "WriteBatch user"}},
      {"zeta", R"({"entityType":"x"})", {}},
  };
  int k = 0;
  for (const E& e : entities) {
    NodeRecord n = MakeNode("entity:" + e.name, NodeType::kEntity, e.name == "zeta" ? "" : e.name, 9000 + k);
    n.meta = e.meta;
    n.run = k % 2 ? "run-e" : "";
    s.nodes.push_back(std::move(n));
    for (const std::string& text : e.observations) {
      NodeRecord o = MakeNode(ObsKey(e.name, k), NodeType::kFact, text, 9100 + k);
      o.meta = R"({"seq":")" + std::to_string(k) + "\"}";
      o.run = k % 3 ? "run-o" : "";
      s.nodes.push_back(std::move(o));
      s.edges.push_back(MakeEdge(ObsKey(e.name, k), kPartOf, "entity:" + e.name, 9200 + k));
      ++k;
    }
    ++k;
  }
  s.nodes.push_back(MakeNode(ObsKey("Orphan", 99), NodeType::kFact, "nobody's note", 9300));
  s.nodes.push_back(MakeNode("entity-like:Alpha", NodeType::kFact, "not an entity", 9301));
  s.edges.push_back(MakeEdge("entity:Alpha", kRelatedTo, "entity:Ghost", 9302));  // -> stub
  return s;
}

// What the block should hold, from the rules: entity names in order, and per
// gram the entity numbers holding it.
struct Expected {
  std::vector<std::string> names;
  std::map<uint32_t, std::vector<uint32_t>> grams;
};

Expected ExpectedOf(const StoreState& s) {
  Expected want;
  std::map<std::string, std::vector<std::string>> fields;  // name -> its fields, lowered
  for (const NodeRecord& n : s.nodes) {
    std::string_view name;
    if (EntityNameOf(n.key, &name)) {
      fields[std::string(name)].push_back(AsciiLower(name));
      fields[std::string(name)].push_back(AsciiLower(EntityTypeFrom(n.meta, n.type)));
    }
  }
  for (const NodeRecord& n : s.nodes) {
    std::string_view owner;
    if (ObservationEntityOf(n.key, &owner)) {
      auto it = fields.find(std::string(owner));
      if (it != fields.end()) it->second.push_back(AsciiLower(n.content));
    }
  }
  for (const auto& [name, texts] : fields) {
    const uint32_t k = static_cast<uint32_t>(want.names.size());
    want.names.push_back(name);
    for (const std::string& t : texts) {
      ForEachGram(t, [&](uint32_t g) {
        std::vector<uint32_t>& list = want.grams[g];
        if (list.empty() || list.back() != k) list.push_back(k);
      });
    }
  }
  return want;
}

std::string Built(const StoreState& s, const WriterOptions& options = {}) {
  auto b = BuildSnapshot(s, options);
  REQUIRE(b.ok());
  return std::move(b).value();
}

// Every entity, its odd labels and the list of every gram the rules give, plus
// absent grams.
std::string SearchAnswers(const Reader& r, const Expected& want) {
  std::string out = "odd:";
  if (auto odd = r.search_odd_labels()) {
    for (uint32_t k : *odd) out += ' ' + std::to_string(k);
  }
  out += '\n';
  for (uint32_t k = 0; k < r.search_entity_count(); ++k) {
    auto e = r.search_entity(k);
    out += e ? std::string(r.key(e->node)) + ' ' + std::to_string(e->observations) : "?";
    out += '\n';
  }
  auto list = [&](uint32_t g) {
    out += std::to_string(g) + ':';
    for (uint32_t k : r.search_postings(r.search_gram(g))) out += ' ' + std::to_string(k);
    out += '\n';
  };
  for (const auto& [g, ks] : want.grams) list(g);
  for (uint32_t g : {GramOf("q"), GramOf("qz"), GramOf("qzx"), uint32_t{0}, 0xFFFFFFFFu}) list(g);
  return out;
}

}  // namespace

TEST_CASE("The entity search block lists every live entity by name and each gram's entities",
          "[snapshot][entity_search]") {
  const StoreState state = EntityState();
  const Expected want = ExpectedOf(state);
  const std::string file = Built(state);
  auto r = snapshot_test::OpenOrDie(file);
  REQUIRE(r->has_entity_search());
  CHECK((r->features() & kFeatureEntitySearch) != 0);
  REQUIRE(r->search_entity_count() == want.names.size());
  // The stub "Ghost" and the orphan's owner are not entities; "A#B" is its own.
  CHECK(want.names == std::vector<std::string>{"A", "A#B", "AB", "Alpha", "n10", "zeta"});
  for (uint32_t k = 0; k < want.names.size(); ++k) {
    auto e = r->search_entity(k);
    REQUIRE(e);
    CHECK(r->key(e->node) == "entity:" + want.names[k]);
    // Its observations' keys start where the key order reaches "obs:NAME#".
    CHECK(e->observations == r->KeyLowerBound("obs:" + want.names[k] + "#"));
  }
  for (const auto& [g, ks] : want.grams) {
    const GramList list = r->search_gram(g);
    INFO("gram " << std::hex << g);
    CHECK(list.count == ks.size());
    CHECK(r->search_postings(list) == ks);
  }
  // Grams no entity holds have no list; a few the rules give, spot-checked.
  CHECK(r->search_gram(GramOf("qzx")).count == 0);
  CHECK(r->search_postings(r->search_gram(GramOf("ü"))).size() == 1);  // "Grüße" (2 bytes)
  CHECK(r->search_postings(r->search_gram(GramOf("ret"))) == std::vector<uint32_t>{3});
  CHECK(r->search_postings(r->search_gram(GramOf("ser"))) ==
        std::vector<uint32_t>{2, 3});  // "user" (AB), "service" (Alpha's type)
  CHECK(r->search_postings(r->search_gram(GramOf("has"))) == std::vector<uint32_t>{1});
  CHECK(r->search_postings(r->search_gram(GramOf("nob"))).empty());  // the orphan's
  // Past the entities: none, and no damage.
  CHECK(!r->search_entity(r->search_entity_count()).has_value());
  CHECK(!r->search_entity(UINT32_MAX).has_value());
  CHECK(r->ReadStatus().ok());
  CHECK(r->Verify().ok());
  // The same state in another input order gives the same bytes.
  StoreState shuffled = state;
  std::reverse(shuffled.nodes.begin(), shuffled.nodes.end());
  std::reverse(shuffled.edges.begin(), shuffled.edges.end());
  CHECK(Built(shuffled) == file);
}

TEST_CASE("The entity labels block lists the entities whose name or type their node's texts may not hold",
          "[snapshot][entity_search]") {
  const StoreState state = EntityState();
  auto r = snapshot_test::OpenOrDie(Built(state));
  CHECK((r->features() & kFeatureEntityLabels) != 0);
  // A#B: no type in its meta (the node type's name, "entity"); n10: its content
  // is not its name; zeta: its content is empty. Alpha, A and AB are plain.
  REQUIRE(r->search_entity_count() == 6);
  CHECK(r->search_odd_labels() == std::vector<uint32_t>{1, 4, 5});
  CHECK(r->ReadStatus().ok());
  CHECK(r->Verify().ok());
  // The rule: the content is the name, and the type a JSON string of the meta as it is.
  CHECK(LabelsInTexts("A", "A", R"({"entityType":"Service"})", "Service"));
  CHECK(LabelsInTexts("A", "A", "{}", ""));
  CHECK_FALSE(LabelsInTexts("A", "a", R"({"entityType":"Service"})", "Service"));
  CHECK_FALSE(LabelsInTexts("A", "A", R"({"entityType":"Serv"})", "Service"));
  CHECK_FALSE(LabelsInTexts("A", "A", R"({"entityType":"tab\there"})", "tab\there"));  // an escape
  CHECK_FALSE(LabelsInTexts("A", "A", R"({"entityType":"Services"})", "Service"));
  CHECK_FALSE(LabelsInTexts("A", "A", R"({"entityType":"xService"})", "Service"));
  CHECK(LabelsInTexts("A", "A", R"({"x":"Service"})", "Service"));  // the words are there all the same
  // Off, or without the entity search: no block, no list (a reader scans instead).
  for (const WriterOptions& o : {WriterOptions{.entity_labels = false}, WriterOptions{.entity_search = false}}) {
    auto off = snapshot_test::OpenOrDie(Built(state, o));
    CHECK((off->features() & kFeatureEntityLabels) == 0);
    CHECK_FALSE(off->search_odd_labels().has_value());
    CHECK(off->ReadStatus().ok());
    CHECK(off->Verify().ok());
  }
  // A list claiming more entities than the entity search holds, or without it, is
  // Corruption at open: the block is 0x08 right after 0x07.
  const std::string good = Built(state);
  BlockInfo labels{};
  for (const BlockInfo& b : r->blocks()) {
    if (b.tag == static_cast<uint32_t>(BlockTag::kEntityLabels)) labels = b;
  }
  REQUIRE(labels.length > 0);
  std::string bad = good;
  bad[labels.offset + kBlockHeaderLength] = 7;  // count 7 of 6 entities
  CHECK(Reader::OpenBuffer(bad).status().IsCorruption());
}

TEST_CASE("No entity, or the option off, writes no entity search block",
          "[snapshot][entity_search]") {
  StoreState plain;
  plain.dimension = 4;
  plain.nodes.push_back(MakeNode("fact:a", NodeType::kFact, "entity:b obs:c", 1));
  auto r = snapshot_test::OpenOrDie(Built(plain));
  CHECK_FALSE(r->has_entity_search());
  CHECK((r->features() & kFeatureEntitySearch) == 0);
  CHECK(Built(plain) == Built(plain, {.entity_search = false}));
  // Only stubs: no live entity.
  plain.edges.push_back(MakeEdge("fact:a", kRelatedTo, "entity:ghost", 2));
  CHECK_FALSE(snapshot_test::OpenOrDie(Built(plain))->has_entity_search());
  auto off = snapshot_test::OpenOrDie(Built(EntityState(), {.entity_search = false}));
  CHECK_FALSE(off->has_entity_search());
  CHECK(off->search_entity_count() == 0);
  CHECK(off->search_gram(GramOf("alp")).count == 0);
  CHECK(!off->search_entity(0).has_value());
  CHECK(off->ReadStatus().ok());
  // Without the extension blocks (no keys) there is none either.
  CHECK_FALSE(snapshot_test::OpenOrDie(Built(EntityState(), {.extensions = false}))->has_entity_search());
}

TEST_CASE("A flipped byte of the entity search or labels block is Corruption where read, never another list",
          "[snapshot][entity_search][lazy]") {
  const StoreState state = EntityState();
  const Expected want = ExpectedOf(state);
  // With the page checksums (what amem writes) and without them (checked by
  // structure only: a changed value that still fits is then Verify()'s to find).
  for (const auto& [pages, tag] : {std::pair{true, BlockTag::kEntitySearch}, std::pair{false, BlockTag::kEntitySearch},
                                   std::pair{true, BlockTag::kEntityLabels}, std::pair{false, BlockTag::kEntityLabels}}) {
    INFO("page checksums " << pages << ", block " << BlockName(static_cast<uint32_t>(tag)));
    const std::string good = Built(state, {.page_checksums = pages});
    auto clean = snapshot_test::OpenOrDie(good);
    const std::string answers = SearchAnswers(*clean, want);
    BlockInfo block{};
    for (const BlockInfo& b : clean->blocks()) {
      if (b.tag == static_cast<uint32_t>(tag)) block = b;
    }
    REQUIRE(block.length > 0);
    size_t unreported = 0, reported = 0;
    for (uint8_t mask : {0xFF, 0x01}) {
      for (uint64_t at = block.offset; at < block.offset + kBlockHeaderLength + block.length; ++at) {
        std::string bytes = good;
        bytes[at] = static_cast<char>(bytes[at] ^ mask);
        auto r = Reader::OpenBuffer(bytes);
        if (!r.ok()) {
          INFO("byte " << at << ": " << r.status().ToString());
          CHECK((r.status().IsCorruption() || r.status().IsNotSupported()));
          ++reported;
          continue;
        }
        const std::string got = SearchAnswers(**r, want);
        const Status status = (*r)->ReadStatus();
        INFO("byte " << at << " ^ " << int{mask} << ": " << status.ToString());
        CHECK((status.ok() || status.IsCorruption()));
        if (!status.ok()) {
          ++reported;
        } else if (got != answers) {
          ++unreported;
          CHECK_FALSE((*r)->Verify().ok());  // the whole check sees it
        }
        if (pages) CHECK((!status.ok() || got == answers));
      }
    }
    CHECK(reported > 0);
    if (!pages) CHECK(unreported > 0);  // so the sweep sees what the pages catch
  }
}

}  // namespace amem::snapshot
