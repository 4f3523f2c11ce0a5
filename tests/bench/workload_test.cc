#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "bench/workload.h"
#include "common/model.h"
#include "common/tokenizer.h"
#include "common/utf8.h"

using namespace amem;
using namespace amem::bench;

namespace {

Workload Make(uint64_t n, bool vectors = false, uint64_t seed = WorkloadOptions().seed) {
  WorkloadOptions o;
  o.num_nodes = n;
  o.vectors = vectors;
  o.seed = seed;
  return GenerateWorkload(o);
}

double Jaccard(const std::string& a, const std::string& b) {
  std::vector<std::string> ta = Tokenize(a), tb = Tokenize(b);
  std::set<std::string> sa(ta.begin(), ta.end()), sb(tb.begin(), tb.end());
  size_t common = 0;
  for (const std::string& t : sa) common += sb.count(t);
  return static_cast<double>(common) / static_cast<double>(sa.size() + sb.size() - common);
}

}  // namespace

TEST_CASE("Random matches an independent xoshiro256** + splitmix64", "[bench][workload]") {
  Random r(0x616d656d);
  CHECK(r.Next() == 0x3e83a8269bb75e16ULL);
  CHECK(r.Next() == 0xb762d496c11414c5ULL);
  CHECK(r.Next() == 0x1842061216714234ULL);
  Random u(42);
  std::vector<uint64_t> got;
  for (int i = 0; i < 8; ++i) got.push_back(u.Uniform(1000));
  CHECK(got == std::vector<uint64_t>{83, 378, 680, 924, 991, 769, 719, 850});
}

TEST_CASE("Random::Uniform stays in range and is roughly flat", "[bench][workload]") {
  Random r(7);
  for (int i = 0; i < 100; ++i) CHECK(r.Uniform(1) == 0);
  std::vector<int> buckets(10);
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = r.Uniform(10);
    REQUIRE(v < 10);
    ++buckets[v];
  }
  for (int b : buckets) CHECK((b > 1700 && b < 2300));
  uint64_t big = uint64_t{1} << 63 | 12345;  // rejection path matters here
  for (int i = 0; i < 1000; ++i) CHECK(r.Uniform(big) < big);
}

TEST_CASE("Vocabulary is fixed, unique, valid UTF-8", "[bench][workload]") {
  const std::vector<std::string>& v = Vocabulary();
  REQUIRE(v.size() == kVocabularySize);
  CHECK(v[0] == "the");
  std::set<std::string> unique(v.begin(), v.end());
  CHECK(unique.size() == v.size());
  int non_ascii = 0;
  for (const std::string& w : v) {
    CHECK(w.size() >= 2);
    CHECK(IsValidUtf8(w));
    CHECK(w.find(' ') == std::string::npos);
    for (unsigned char c : w) non_ascii += c >= 0x80;
  }
  CHECK(non_ascii > 0);
}

TEST_CASE("Workload is deterministic and pinned by a known checksum", "[bench][workload]") {
  Workload a = Make(1000), b = Make(1000);
  CHECK(WorkloadChecksum(a) == WorkloadChecksum(b));
  CHECK(WorkloadChecksum(a) == 0xd8fd84eb0dfb4532ULL);
  CHECK(WorkloadChecksum(Make(300, true)) == 0xa08c6579824de813ULL);
  CHECK(WorkloadChecksum(Make(1000, false, 1)) != WorkloadChecksum(a));
  // A prefix of a larger workload is not required to match, but sizes scale.
  CHECK(Make(0).nodes.empty());
  CHECK(Make(0).edges.empty());
  CHECK(Make(1).edges.empty());
}

TEST_CASE("Tiny workloads have exactly three unique edges per node", "[bench][workload]") {
  for (uint64_t n = 2; n <= 12; ++n) {
    Workload w = Make(n);
    REQUIRE(w.nodes.size() == n);
    CHECK(w.edges.size() == 3 * n);
    std::set<std::string> keys;
    for (const NodeInput& node : w.nodes) keys.insert(node.key);
    std::set<std::tuple<std::string, std::string, std::string>> triples;
    for (const EdgeInput& e : w.edges) {
      CHECK(keys.count(e.src) == 1);
      CHECK(keys.count(e.dst) == 1);
      CHECK(e.src != e.dst);
      triples.emplace(e.src, e.rel, e.dst);
    }
    CHECK(triples.size() == w.edges.size());
  }
}

TEST_CASE("Workload shape matches workload.h", "[bench][workload]") {
  const uint64_t n = 10000;
  Workload w = Make(n, true);
  REQUIRE(w.nodes.size() == n);
  REQUIRE(w.edges.size() == 3 * n);

  std::map<std::string, size_t> index;
  std::vector<int> type_count(kNodeTypeCount);
  size_t content_bytes = 0, non_ascii_nodes = 0;
  for (size_t i = 0; i < w.nodes.size(); ++i) {
    const NodeInput& node = w.nodes[i];
    INFO("node " << i << " " << node.key);
    REQUIRE(index.emplace(node.key, i).second);
    CHECK(IsValidUtf8(node.key));
    CHECK(node.key.size() <= kMaxKeyBytes);
    CHECK(IsValidUtf8(node.content));
    CHECK(node.content.size() >= 100);
    CHECK(node.content.back() == '.');
    content_bytes += node.content.size();
    for (unsigned char c : node.content) {
      if (c >= 0x80) {
        ++non_ascii_nodes;
        break;
      }
    }
    ++type_count[static_cast<int>(node.type)];
    CHECK((node.confidence >= 0.3f && node.confidence <= 1.0f));
    REQUIRE(node.vector.size() == kDefaultDimension);
    bool vector_ok = true;
    for (float f : node.vector) {  // finite, inside (-1, 1), on the 2^-12 grid
      vector_ok &= std::isfinite(f) && std::fabs(f) < 1.0f &&
                   f * 4096.0f == std::trunc(f * 4096.0f);
    }
    CHECK(vector_ok);
    REQUIRE(node.ts.has_value());
    if (i > 0) CHECK(*node.ts > *w.nodes[i - 1].ts);
    char run[32];
    std::snprintf(run, sizeof(run), "run-%05zu", i / 100);
    CHECK(node.run == std::optional<std::string>(run));
    CHECK(node.task.has_value());
    CHECK(node.scope.has_value());
  }
  double mean = static_cast<double>(content_bytes) / n;
  CHECK((mean > 180 && mean < 230));
  CHECK(non_ascii_nodes > 0);
  // Ordinary mix (per 100): 32 fact ... ; planted corrections ~3%, facts gain ~3%.
  auto share = [&](NodeType t) { return 100.0 * type_count[static_cast<int>(t)] / n; };
  CHECK((share(NodeType::kCorrection) > 2.0 && share(NodeType::kCorrection) < 4.0));
  CHECK((share(NodeType::kFact) > 30.0 && share(NodeType::kFact) < 37.0));
  CHECK((share(NodeType::kFile) > 9.5 && share(NodeType::kFile) < 13.5));
  CHECK((share(NodeType::kSymbol) > 9.5 && share(NodeType::kSymbol) < 13.5));
  for (int t = 0; t < kNodeTypeCount; ++t) CHECK(type_count[t] > 0);

  std::set<std::tuple<std::string, std::string, std::string>> triples;
  std::map<std::string, int> rel_count;
  for (const EdgeInput& e : w.edges) {
    REQUIRE(index.count(e.src) == 1);
    REQUIRE(index.count(e.dst) == 1);
    CHECK(e.src != e.dst);
    CHECK(ParseBuiltinRelation(e.rel).has_value());
    CHECK((e.weight >= 0.125f && e.weight <= 1.0f));
    triples.emplace(e.src, e.rel, e.dst);
    ++rel_count[e.rel];
  }
  CHECK(triples.size() == w.edges.size());
  CHECK(rel_count["temporal_next"] == static_cast<int>(n - n / 100));
  CHECK(rel_count.count("contradicts") == 0);
  CHECK(rel_count["supersedes"] == type_count[static_cast<int>(NodeType::kCorrection)]);
  CHECK(rel_count.size() >= 12);

  // Supersedes chains: each link is an edge new -> old, oldest is a fact.
  size_t long_chains = 0, links = 0;
  for (const std::vector<uint32_t>& chain : w.chains) {
    REQUIRE(chain.size() >= 2);
    CHECK(w.nodes[chain[0]].type == NodeType::kFact);
    long_chains += chain.size() >= 3;
    for (size_t k = 1; k < chain.size(); ++k) {
      CHECK(w.nodes[chain[k]].type == NodeType::kCorrection);
      CHECK(chain[k] > chain[k - 1]);
      CHECK(triples.count({w.nodes[chain[k]].key, "supersedes", w.nodes[chain[k - 1]].key}));
      ++links;
    }
  }
  CHECK(links == static_cast<size_t>(rel_count["supersedes"]));
  CHECK(long_chains >= 20);

  CHECK((w.near_duplicates.size() > 150 && w.near_duplicates.size() < 250));
  for (auto [a, b] : w.near_duplicates) {
    CHECK(a < b);
    CHECK(w.nodes[b].type == NodeType::kFact);
    CHECK(Jaccard(w.nodes[a].content, w.nodes[b].content) >= 0.9);
  }
  CHECK((w.contradictions.size() > 50 && w.contradictions.size() < 150));
  std::set<uint32_t> statements;
  for (auto [a, b] : w.contradictions) {
    CHECK(a < b);
    CHECK(statements.insert(a).second);  // each statement contradicted once
    const std::string& s = w.nodes[a].content;
    const std::string& neg = w.nodes[b].content;
    CHECK(s.rfind("The ", 0) == 0);
    size_t at = s.find(" is enabled.");
    REQUIRE(at != std::string::npos);
    CHECK(neg == s.substr(0, at) + " is not enabled." + s.substr(at + 12));
    CHECK(!triples.count({w.nodes[a].key, "contradicts", w.nodes[b].key}));
  }
}

TEST_CASE("JSON lines parse back to the generated values", "[bench][workload]") {
  Workload w = Make(200, true);
  for (const NodeInput& node : w.nodes) {
    std::string line = NodeToJsonLine(node);
    REQUIRE(line.back() == '\n');
    REQUIRE(std::count(line.begin(), line.end(), '\n') == 1);
    auto j = nlohmann::json::parse(line);
    CHECK(j["op"] == "node");
    CHECK(j["key"] == node.key);
    CHECK(j["type"] == NodeTypeName(node.type));
    CHECK(j["content"] == node.content);
    CHECK(j["meta"].dump() == node.meta);
    CHECK(j["confidence"].get<float>() == node.confidence);
    CHECK(j["vector"].get<std::vector<float>>() == node.vector);
    CHECK(j["ts"] == *node.ts);
    CHECK(j["run"] == *node.run);
    CHECK(j["task"] == *node.task);
    CHECK(j["scope"] == *node.scope);
  }
  for (const EdgeInput& e : w.edges) {
    auto j = nlohmann::json::parse(EdgeToJsonLine(e));
    CHECK(j["op"] == "edge");
    CHECK(j["src"] == e.src);
    CHECK(j["rel"] == e.rel);
    CHECK(j["dst"] == e.dst);
    CHECK(j["weight"].get<float>() == e.weight);
    CHECK(j["payload"] == nlohmann::json::object());
    CHECK(j["ts"] == *e.ts);
  }
}

TEST_CASE("JSON lines escape hostile strings", "[bench][workload]") {
  NodeInput node;
  node.key = "k\"ey\\with\nnew\x01line";
  node.type = NodeType::kEntity;
  node.content = "caf\xc3\xa9 \t tab \x1f end";
  node.meta = R"({"kind":"tool"})";
  std::string line = NodeToJsonLine(node);
  REQUIRE(std::count(line.begin(), line.end(), '\n') == 1);
  auto j = nlohmann::json::parse(line);
  CHECK(j["key"] == node.key);
  CHECK(j["content"] == node.content);
  CHECK(j["meta"]["kind"] == "tool");
  CHECK(!j.contains("vector"));
  CHECK(!j.contains("ts"));

  EdgeInput e;
  e.src = "a\"";
  e.rel = "related_to";
  e.dst = "b\\";
  e.payload = R"({"x":[1,2]})";
  auto je = nlohmann::json::parse(EdgeToJsonLine(e));
  CHECK(je["src"] == e.src);
  CHECK(je["dst"] == e.dst);
  CHECK(je["payload"]["x"][1] == 2);
  CHECK(!je.contains("run"));
}

TEST_CASE("WriteJsonLines writes nodes then edges", "[bench][workload]") {
  Workload w = Make(50);
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  REQUIRE(WriteJsonLines(w, f));
  std::rewind(f);
  std::string all;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) all.append(buf, got);
  std::fclose(f);
  std::string expected;
  for (const NodeInput& n : w.nodes) expected += NodeToJsonLine(n);
  for (const EdgeInput& e : w.edges) expected += EdgeToJsonLine(e);
  CHECK(all == expected);
  CHECK(std::count(all.begin(), all.end(), '\n') == 200);
}
