// The embeddings block (0x1D, docs/FORMAT.md §8.20): its entries are exactly the
// built-in embedding HashEmbed computes from the content, a count too large for it
// sends the node back to its content, damage is refused, and the text-only
// `similar` and `hybrid-search` answer the same with the block as without it.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>  // .dump() of the query documents

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/coding.h"
#include "common/tokenizer.h"
#include "query/hybrid_search.h"
#include "query/similar.h"
#include "snapshot/format.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"

namespace amem::snapshot {
namespace {

using snapshot_test::Build;
using snapshot_test::MakeNode;
using snapshot_test::OpenOrDie;
using snapshot_test::SmallState;

// HashEmbed of the counts an embedding's entries hold, computed as HashEmbed does.
std::vector<float> Densify(std::span<const uint32_t> entries, uint32_t dim) {
  std::vector<float> out(dim, 0.0f);
  for (uint32_t e : entries) out[EmbeddingBlock::Bucket(e)] = static_cast<float>(EmbeddingBlock::Count(e));
  double norm = 0;
  for (float f : out) norm += static_cast<double>(f) * f;
  if (norm == 0) return out;
  const float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (float& f : out) f *= inv;
  return out;
}

// Texts with repeated words (counts above 1), few distinct words in a small
// dimension (buckets shared, counts that cancel), punctuation and case.
StoreState RandomState(uint32_t seed, uint32_t n, uint32_t dim, bool vectors) {
  std::mt19937 rng(seed);
  const std::vector<std::string> words = {"cache", "retry", "Policy", "lmdb", "graph", "memory",
                                          "snapshot", "agent", "the", "of", "x", "io-bound",
                                          "delta", "merge", "hash", "query", "BM25", "tokens"};
  StoreState s;
  s.dimension = dim;
  for (uint32_t i = 0; i < n; ++i) {
    std::string text;
    const uint32_t len = rng() % 30;
    for (uint32_t k = 0; k < len; ++k) {
      text += words[rng() % words.size()];
      text += (rng() % 5 == 0) ? ", " : " ";
    }
    NodeRecord node = MakeNode("n:" + std::to_string(i), static_cast<NodeType>(rng() % 4), text,
                               1000 + i);
    node.run = i % 3 ? "run-a" : "";
    if (vectors && rng() % 2) {
      node.vector.resize(dim);
      for (float& f : node.vector) f = static_cast<float>(static_cast<int>(rng() % 200) - 100) / 50.0f;
    }
    s.nodes.push_back(std::move(node));
  }
  return s;
}

TEST_CASE("embeddings: every node's entries are the built-in embedding of its content",
          "[snapshot][embeddings]") {
  for (uint32_t dim : {4u, 7u, 128u}) {
    INFO("dimension " << dim);
    StoreState state = dim == 4 ? SmallState() : RandomState(dim, 300, dim, false);
    auto r = OpenOrDie(Build(state));
    REQUIRE((r->features() & kFeatureEmbeddings) != 0);
    REQUIRE(r->EnsureContent().ok());
    REQUIRE(r->Verify().ok());
    uint32_t with_entries = 0;
    for (uint32_t i = 0; i < r->node_count(); ++i) {
      INFO("node " << r->key(i) << ": " << r->content(i));
      std::span<const uint32_t> entries;
      REQUIRE(r->embedding(i, &entries));
      for (uint32_t e : entries) {
        CHECK(EmbeddingBlock::Bucket(e) < dim);
        CHECK(EmbeddingBlock::Count(e) != 0);
      }
      CHECK(Densify(entries, dim) == HashEmbed(r->content(i), dim));
      with_entries += entries.empty() ? 0 : 1;
    }
    CHECK(with_entries > r->node_count() / 2);
  }
}

TEST_CASE("embeddings: a count past 16 bits leaves the node to its content",
          "[snapshot][embeddings]") {
  StoreState state = SmallState();
  std::string many;
  for (int k = 0; k < 40000; ++k) many += "again ";
  state.nodes.push_back(MakeNode("fact:repeats", NodeType::kFact, many + "and once", 5000));
  auto r = OpenOrDie(Build(state));
  const uint32_t big = *r->FindKey("fact:repeats");
  std::span<const uint32_t> entries;
  CHECK_FALSE(r->embedding(big, &entries));
  for (uint32_t i = 0; i < r->node_count(); ++i) {
    if (i != big) CHECK(r->embedding(i, &entries));
  }
  // embeddings(), a range at a time, answers as embedding() one node at a time,
  // for ranges that start at, end at, hold or miss the overflow node.
  const uint32_t n = r->node_count();
  for (uint32_t size : {1u, 3u, n}) {
    for (uint32_t first = 0; first < n; first += size) {
      const uint32_t count = std::min(size, n - first);
      std::vector<std::optional<std::span<const uint32_t>>> batch(count);
      r->embeddings(first, count, batch.data());
      for (uint32_t k = 0; k < count; ++k) {
        INFO("size " << size << " node " << first + k);
        REQUIRE(batch[k].has_value() == r->embedding(first + k, &entries));
        if (batch[k]) CHECK((batch[k]->data() == entries.data() && batch[k]->size() == entries.size()));
      }
    }
  }
  REQUIRE(r->ReadStatus().ok());
  REQUIRE(r->Verify().ok());
  // The query embeds that node's content instead: the same answer as without the block.
  WriterOptions none;
  none.embeddings = false;
  auto plain = OpenOrDie(Build(state, none));
  query::SimilarOptions o;
  o.text = "again and again";
  o.limit = 5;
  auto with = query::Similar(*r, o), without = query::Similar(*plain, o);
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  REQUIRE(with->hits.size() == without->hits.size());
  CHECK(with->hits[0].index == big);
  for (size_t k = 0; k < with->hits.size(); ++k) {
    CHECK(with->hits[k].index == without->hits[k].index);
    CHECK(with->hits[k].similarity == without->hits[k].similarity);
  }
}

TEST_CASE("embeddings: without the option or the term index there is no block",
          "[snapshot][embeddings]") {
  WriterOptions none;
  none.embeddings = false;
  auto r = OpenOrDie(Build(SmallState(), none));
  CHECK((r->features() & kFeatureEmbeddings) == 0);
  std::span<const uint32_t> entries;
  CHECK_FALSE(r->embedding(0, &entries));
  WriterOptions no_terms;
  no_terms.term_index = false;
  auto t = OpenOrDie(Build(SmallState(), no_terms));
  CHECK((t->features() & kFeatureEmbeddings) == 0);
  CHECK_FALSE(t->embedding(0, &entries));
}

// The block's body within `bytes` (a file written without a checksum block).
size_t BodyOffset(const std::string& bytes) {
  auto r = OpenOrDie(bytes);
  for (const BlockInfo& b : r->blocks()) {
    if (b.tag == static_cast<uint32_t>(BlockTag::kEmbeddings)) return b.offset + kBlockHeaderLength;
  }
  FAIL("no embeddings block");
  return 0;
}

TEST_CASE("embeddings: a damaged block is refused at open or by verify",
          "[snapshot][embeddings]") {
  WriterOptions o;
  o.checksum = false;
  const std::string good = Build(SmallState(), o);
  const size_t body = BodyOffset(good);
  auto r = OpenOrDie(good);
  const uint32_t n = r->node_count();
  auto open_error = [](const std::string& bytes) {
    auto opened = Reader::OpenBuffer(bytes);
    return opened.ok() ? std::string() : opened.status().ToString();
  };
  auto put32 = [](std::string* bytes, size_t at, uint32_t v) {
    std::string enc;
    PutFixed32(&enc, v);
    bytes->replace(at, 4, enc);
  };
  {
    std::string bad = good;
    put32(&bad, body, 5);  // dimension
    CHECK_THAT(open_error(bad), Catch::Contains("embeddings: dimension differs"));
  }
  {
    std::string bad = good;
    put32(&bad, body + EmbeddingBlock::kFixedLength + 4 * 3, 0xFFFF);  // offset 3
    // Offsets are checked where read: the file opens, node 3's embedding is
    // refused and recorded, and verify finds the whole block's fault.
    auto damaged = OpenOrDie(bad);
    CHECK(damaged->ReadStatus().ok());
    std::span<const uint32_t> entries;
    CHECK_FALSE(damaged->embedding(3, &entries));
    CHECK_THAT(damaged->ReadStatus().ToString(), Catch::Contains("embeddings: offsets of node 3"));
    CHECK_THAT(OpenOrDie(bad)->Verify().ToString(), Catch::Contains("embeddings: offsets not monotone"));
  }
  {
    std::string bad = good;
    put32(&bad, body + 4, DecodeFixed32(good.data() + body + 4) + 1000000);  // entry count
    CHECK_THAT(open_error(bad), Catch::Contains("embeddings"));
  }
  {
    std::string bad = good;
    put32(&bad, body + 12, 1);
    CHECK_THAT(open_error(bad), Catch::Contains("embeddings: reserved"));
  }
  {
    std::string bad = good;  // the feature bit cleared while the block is present
    const uint32_t features = DecodeFixed32(good.data() + 56);
    put32(&bad, 56, features & ~kFeatureEmbeddings);
    CHECK_THAT(open_error(bad), Catch::Contains("embeddings: present without its feature flag"));
  }
  {
    // A bucket past the dimension opens (entries are not read at open) but fails
    // verify, and the query reports it instead of reading past its weights.
    std::string bad = good;
    const size_t entries = body + EmbeddingBlock::kFixedLength + 4 * (size_t{n} + 1);
    const uint32_t e = DecodeFixed32(good.data() + entries);
    put32(&bad, entries, (e & 0xFFFF0000u) | 0xFFFF);
    auto damaged = OpenOrDie(bad);
    CHECK_THAT(damaged->Verify().ToString(), Catch::Contains("embeddings: entry 0"));
    query::SimilarOptions q;
    q.text = "graph memory";
    auto res = query::Similar(*damaged, q);
    REQUIRE_FALSE(res.ok());
    CHECK(res.status().IsCorruption());
  }
}

void CheckSame(const query::SimilarResult& a, const query::SimilarResult& b) {
  CHECK(std::string(a.basis) == b.basis);
  CHECK(a.scanned == b.scanned);
  CHECK(a.embedded == b.embedded);
  CHECK(a.matched == b.matched);
  REQUIRE(a.hits.size() == b.hits.size());
  for (size_t k = 0; k < a.hits.size(); ++k) {
    CHECK(a.hits[k].index == b.hits[k].index);
    CHECK(a.hits[k].similarity == b.hits[k].similarity);  // bit for bit
  }
}

TEST_CASE("embeddings: similar and hybrid-search answer exactly as without the block",
          "[snapshot][embeddings][query]") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (bool vectors : {false, true}) {
      INFO("seed " << seed << (vectors ? ", with vectors" : ""));
      const uint32_t dim = seed == 1 ? 16 : 128;
      StoreState state = RandomState(seed, 400, dim, vectors);
      WriterOptions none;
      none.embeddings = false;
      auto with = OpenOrDie(Build(state)), without = OpenOrDie(Build(state, none));
      std::mt19937 rng(seed);
      for (const char* text : {"cache retry policy", "graph memory of the agent", "BM25 tokens",
                               "lmdb lmdb lmdb snapshot"}) {
        query::SimilarOptions o;
        o.text = text;
        o.limit = 20;
        o.min_similarity = -1;
        auto a = query::Similar(*with, o), b = query::Similar(*without, o);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CheckSame(*a, *b);
        query::HybridSearchOptions h;
        h.text = text;
        h.limit = 10;
        auto ha = query::HybridSearch(*with, h), hb = query::HybridSearch(*without, h);
        REQUIRE(ha.ok());
        REQUIRE(hb.ok());
        CHECK(query::HybridSearchJson(*with, *ha).dump() == query::HybridSearchJson(*without, *hb).dump());
      }
      for (int k = 0; k < 5; ++k) {  // node queries: stored vectors with embedded fallback
        query::SimilarOptions o;
        o.node = rng() % with->node_count();
        o.limit = 15;
        auto a = query::Similar(*with, o), b = query::Similar(*without, o);
        REQUIRE(a.ok() == b.ok());
        if (a.ok()) CheckSame(*a, *b);
      }
      query::SimilarOptions typed;  // with a type filter
      typed.text = "snapshot merge delta";
      typed.types.Add(NodeType::kDecision);
      auto a = query::Similar(*with, typed), b = query::Similar(*without, typed);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CheckSame(*a, *b);
    }
  }
}

}  // namespace
}  // namespace amem::snapshot
