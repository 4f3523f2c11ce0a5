#include "bench/workload.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cstring>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>

#include "bench/bench_util.h"
#include "common/coding.h"
#include "common/hash.h"

namespace amem::bench {

namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// The 128-bit product a * b as (high, low), in portable 64-bit arithmetic.
void Multiply128(uint64_t a, uint64_t b, uint64_t* hi, uint64_t* lo) {
  const uint64_t a0 = a & 0xffffffff, a1 = a >> 32, b0 = b & 0xffffffff, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffff) + (p10 & 0xffffffff);
  *lo = (mid << 32) | (p00 & 0xffffffff);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

// The most frequent words, in rank order (English function words first, then
// vocabulary a coding agent's notes use). Must stay unique.
constexpr const char* kCommonWords[] = {
    "the", "of", "and", "to", "in", "is", "for", "that", "it", "on", "with", "as",
    "this", "be", "by", "are", "from", "at", "or", "an", "when", "we", "not", "if",
    "but", "all", "can", "which", "has", "was", "will", "each", "one", "new", "after",
    "before", "only", "so", "into", "than", "then", "use", "used", "uses", "file",
    "function", "test", "tests", "build", "store", "cache", "index", "query", "node",
    "edge", "graph", "memory", "value", "key", "error", "return", "returns", "call",
    "calls", "type", "types", "data", "read", "write", "writes", "reads", "time",
    "path", "list", "map", "set", "size", "page", "block", "header", "record",
    "buffer", "stream", "thread", "lock", "loop", "check", "checks", "config",
    "option", "flag", "default", "server", "client", "request", "response", "user",
    "session", "run", "task", "agent", "tool", "result", "results", "output", "input",
    "module", "symbol", "class", "method", "field", "struct", "pointer", "string",
    "number", "count", "limit", "offset", "length", "version", "format", "schema",
    "table", "row", "column", "batch", "commit", "transaction", "rollback", "retry",
    "timeout", "latency", "budget", "benchmark", "median", "warm", "cold", "fast",
    "slow", "large", "small", "first", "last", "next", "previous", "old", "current",
    "stable", "broken", "fixed", "failing", "passing", "enabled", "disabled",
    "missing", "empty", "full", "valid", "invalid", "safe", "unsafe", "should",
    "must", "never", "always", "because", "since", "until", "while", "without",
    "between", "over", "under", "about", "against", "along", "also", "again", "more",
    "most", "less", "many", "few", "some", "other", "same", "different", "every",
    "both", "either", "neither", "found", "make", "makes", "made", "keep", "keeps",
    "need", "needs", "want", "decide", "decided", "decision", "fact", "reason",
    "cause", "effect", "change", "changes", "changed", "update", "updated", "delete",
    "deleted", "insert", "merge", "split", "sort", "sorted", "scan", "seek", "open",
    "close", "closed", "start", "stop", "parse", "parser", "encode", "decode", "hash",
    "checksum", "snapshot", "export", "import", "compact", "compaction", "history",
    "revision", "log", "debug", "release", "compile", "compiler", "linker", "header",
    "warning", "crash", "bug", "fix", "patch", "review", "branch", "main", "remote",
    "local", "network", "disk", "sync", "async", "queue", "worker", "pool", "handle",
    "handler", "event", "events", "metric", "metrics", "trace", "span", "api",
    "endpoint", "route", "token", "tokens", "vector", "embedding", "score", "rank",
    "ranking", "search", "filter", "match", "pattern", "rule", "rules", "policy",
    "constraint", "procedure", "skill", "episode", "inference", "correction",
};

constexpr std::string_view kConsonants = "bdfgklmnprstvz";  // 14
constexpr std::string_view kVowels = "aeiou";                // 5
// Accented forms of kVowels, UTF-8 (2 bytes each): á é ï ö ü.
constexpr const char* kAccented[] = {"\xc3\xa1", "\xc3\xa9", "\xc3\xaf", "\xc3\xb6",
                                     "\xc3\xbc"};

std::vector<std::string> BuildVocabulary() {
  std::vector<std::string> words;
  std::set<std::string> seen;
  for (const char* w : kCommonWords) {
    if (seen.insert(w).second) words.push_back(w);
  }
  // Made-up words: CV-CV-CVC syllables picked by a bijective scramble of a counter,
  // so they look random but are unique by construction. Every 61st gets an accented
  // second vowel so that the corpus holds multi-byte UTF-8.
  constexpr uint64_t kSyllables = kConsonants.size() * kVowels.size();  // 70
  constexpr uint64_t kSpace = kSyllables * kSyllables * kSyllables * kConsonants.size();
  for (uint64_t j = 0; words.size() < kVocabularySize; ++j) {
    uint64_t x = (j * 1000003ULL + 12345) % kSpace;
    std::string w;
    for (int s = 0; s < 3; ++s) {
      uint64_t syl = x % kSyllables;
      x /= kSyllables;
      w.push_back(kConsonants[syl / kVowels.size()]);
      size_t v = syl % kVowels.size();
      if (s == 1 && j % 61 == 7) {
        w += kAccented[v];
      } else {
        w.push_back(kVowels[v]);
      }
    }
    w.push_back(kConsonants[x % kConsonants.size()]);
    if (seen.insert(w).second) words.push_back(w);
  }
  return words;
}

// Relation candidates per source node type (docs/DESIGN.md §2 directions).
std::vector<RelationId> RelationsFor(NodeType type) {
  switch (type) {
    case NodeType::kFact: return {kSupports, kRelatedTo, kDerivedFrom};
    case NodeType::kDecision: return {kCausedBy, kDecidedFor, kRelatedTo};
    case NodeType::kInference: return {kCausedBy, kDerivedFrom, kSupports};
    case NodeType::kCorrection: return {kRelatedTo, kCausedBy, kDerivedFrom};
    case NodeType::kSkill: return {kRelatedTo, kPartOf, kDerivedFrom};
    case NodeType::kEpisode: return {kRelatedTo, kPartOf, kCausedBy};
    case NodeType::kConstraint: return {kConstrains, kRelatedTo, kSupports};
    case NodeType::kFile: return {kDefines, kImports, kPartOf, kImplements};
    case NodeType::kSymbol: return {kCalls, kReferences, kPartOf, kTests};
    case NodeType::kModule: return {kImports, kPartOf, kRelatedTo};
    case NodeType::kEntity: return {kRelatedTo, kPartOf, kReferences};
  }
  return {kRelatedTo, kPartOf, kReferences};
}

// Ordinary node types and their weights per 100 (see workload.h).
struct TypeWeight {
  NodeType type;
  uint32_t weight;
};
constexpr TypeWeight kTypeMix[] = {
    {NodeType::kFact, 32},   {NodeType::kDecision, 8},   {NodeType::kInference, 12},
    {NodeType::kSkill, 4},   {NodeType::kEpisode, 8},    {NodeType::kConstraint, 6},
    {NodeType::kFile, 12},   {NodeType::kSymbol, 12},    {NodeType::kModule, 3},
    {NodeType::kEntity, 3},
};

constexpr uint32_t kTopics = 64;
constexpr uint32_t kModules = 32;
constexpr uint32_t kTaskSize = 20;
constexpr int64_t kSessionSeconds = 21600;
constexpr int64_t kNodeSeconds = 30;
constexpr float kGrid = 1.0f / 4096;  // vector elements are multiples of 2^-12

enum class Plant : uint8_t { kNone, kCorrection, kNearDuplicate, kContradiction };

class Generator {
 public:
  explicit Generator(const WorkloadOptions& options)
      : options_(options), rnd_(options.seed), words_(Vocabulary()) {
    uint64_t total = 0;
    zipf_cdf_.reserve(words_.size());
    for (size_t r = 0; r < words_.size(); ++r) {
      total += (uint64_t{1} << 40) / (r + 1);
      zipf_cdf_.push_back(total);
    }
    if (options_.vectors) {
      Random crnd(options.seed ^ 0x746f70696373ULL);  // "topics"
      centroids_.resize(size_t{kTopics} * options_.dimension);
      for (int32_t& c : centroids_) c = static_cast<int32_t>(crnd.Uniform(4096)) - 2048;
    }
  }

  Workload Run();

 private:
  const std::string& Word() {
    uint64_t u = rnd_.Uniform(zipf_cdf_.back());
    size_t r = std::upper_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin();
    return words_[r];
  }
  // A made-up word (rank >= 512): distinctive subjects and names.
  const std::string& RareWord() { return words_[512 + rnd_.Uniform(words_.size() - 512)]; }
  const std::string& ModuleName(uint32_t m) { return words_[600 + m]; }

  // Whole sentences appended to *out until it holds at least `target` bytes.
  void AppendSentences(size_t target, std::string* out);
  std::string Text() {
    std::string s;
    AppendSentences(150 + rnd_.Uniform(101), &s);
    return s;
  }
  // Replaces `count` randomly chosen words of `text` by Zipf words, keeping
  // capitalisation and trailing punctuation.
  std::string ReplaceWords(std::string_view text, int count);

  std::vector<float> Vector(uint32_t topic);
  std::vector<float> Near(const std::vector<float>& v);

  NodeType DrawType() {
    uint64_t u = rnd_.Uniform(100);
    for (const TypeWeight& t : kTypeMix) {
      if (u < t.weight) return t.type;
      u -= t.weight;
    }
    return NodeType::kFact;
  }
  float Confidence(uint64_t lo) {
    return static_cast<float>(lo + rnd_.Uniform(101 - lo)) / 100.0f;
  }
  std::string Key(NodeType type, uint32_t i, uint32_t module);

  bool PlantCorrection(uint32_t i, NodeInput* node, uint32_t* superseded);
  bool PlantNearDuplicate(uint32_t i, NodeInput* node);
  bool PlantContradiction(uint32_t i, NodeInput* node);
  // Adds `wanted` edges leaving node i (the supersedes edge first, if any), towards
  // nodes in [0, range) or drawn by degree.
  void AddEdges(uint32_t i, NodeType type, std::optional<uint32_t> superseded, int wanted,
                uint32_t range);
  void PushEdge(uint32_t src, RelationId rel, uint32_t dst, const NodeInput& at);

  const WorkloadOptions& options_;
  Random rnd_;
  const std::vector<std::string>& words_;
  std::vector<uint64_t> zipf_cdf_;
  std::vector<int32_t> centroids_;

  Workload w_;
  std::vector<uint32_t> plain_facts_;   // ordinary facts, candidates for planting
  std::vector<uint32_t> statements_;    // "is enabled" facts not yet contradicted
  std::vector<bool> superseded_;
  std::vector<uint32_t> endpoints_;     // both ends of every edge: preferential draws
};

void Generator::AppendSentences(size_t target, std::string* out) {
  while (out->size() < target) {
    // The last sentence stops at the first word that reaches the target, so texts
    // overshoot it by less than a word.
    uint64_t len = 6 + rnd_.Uniform(9);
    for (uint64_t k = 0; k < len && (k < 3 || out->size() < target); ++k) {
      if (!out->empty()) out->push_back(' ');
      size_t start = out->size();
      *out += Word();
      if (k == 0 && (*out)[start] >= 'a' && (*out)[start] <= 'z') (*out)[start] -= 'a' - 'A';
    }
    out->push_back('.');
  }
}

std::string Generator::ReplaceWords(std::string_view text, int count) {
  std::vector<std::string> words;
  size_t p = 0;
  while (p <= text.size()) {
    size_t q = text.find(' ', p);
    if (q == std::string_view::npos) q = text.size();
    words.emplace_back(text.substr(p, q - p));
    p = q + 1;
  }
  for (int c = 0; c < count; ++c) {
    std::string& w = words[rnd_.Uniform(words.size())];
    bool capital = !w.empty() && w[0] >= 'A' && w[0] <= 'Z';
    bool period = !w.empty() && w.back() == '.';
    std::string r = Word();
    if (capital && r[0] >= 'a' && r[0] <= 'z') r[0] -= 'a' - 'A';
    if (period) r.push_back('.');
    w = std::move(r);
  }
  std::string out;
  for (size_t k = 0; k < words.size(); ++k) {
    if (k > 0) out.push_back(' ');
    out += words[k];
  }
  return out;
}

std::vector<float> Generator::Vector(uint32_t topic) {
  std::vector<float> v(options_.dimension);
  const int32_t* c = &centroids_[size_t{topic} * options_.dimension];
  for (uint32_t d = 0; d < options_.dimension; ++d) {
    int32_t noise = static_cast<int32_t>(rnd_.Uniform(1024)) - 512;
    v[d] = static_cast<float>(c[d] + noise) * kGrid;  // exact: a power-of-two scale
  }
  return v;
}

std::vector<float> Generator::Near(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (size_t d = 0; d < v.size(); ++d) {
    int32_t noise = static_cast<int32_t>(rnd_.Uniform(64)) - 32;
    out[d] = v[d] + static_cast<float>(noise) * kGrid;  // exact: both on the 2^-12 grid
  }
  return out;
}

std::string Generator::Key(NodeType type, uint32_t i, uint32_t module) {
  char num[16];
  std::snprintf(num, sizeof(num), "%07u", i);
  switch (type) {
    case NodeType::kFile:
      return "file:src/" + ModuleName(module) + "/" + RareWord() + "-" + num + ".cc";
    case NodeType::kSymbol:
      return "symbol:" + ModuleName(module) + "::" + RareWord() + "_" + num;
    case NodeType::kModule:
      return "module:" + ModuleName(module) + "-" + num;
    default:
      return std::string(NodeTypeName(type)) + ":n" + num;
  }
}

bool Generator::PlantCorrection(uint32_t i, NodeInput* node, uint32_t* superseded) {
  // 40%: extend an existing chain at its newest member; else start one at a fact.
  if (!w_.chains.empty() && rnd_.OneIn(2, 5)) {
    std::vector<uint32_t>& chain = w_.chains[rnd_.Uniform(w_.chains.size())];
    *superseded = chain.back();
    chain.push_back(i);
  } else {
    if (plain_facts_.empty()) return false;
    uint32_t f = plain_facts_[rnd_.Uniform(plain_facts_.size())];
    if (superseded_[f]) return false;
    *superseded = f;
    w_.chains.push_back({f, i});
  }
  superseded_[*superseded] = true;
  const NodeInput& old = w_.nodes[*superseded];
  node->type = NodeType::kCorrection;
  node->content = ReplaceWords(old.content, 3);
  node->confidence = Confidence(60);
  if (!old.vector.empty()) node->vector = Near(old.vector);
  return true;
}

bool Generator::PlantNearDuplicate(uint32_t i, NodeInput* node) {
  if (plain_facts_.empty()) return false;
  uint32_t f = plain_facts_[rnd_.Uniform(plain_facts_.size())];
  const NodeInput& old = w_.nodes[f];
  node->type = NodeType::kFact;
  node->content = old.content;
  node->content.pop_back();  // the final period
  node->content += " " + RareWord() + ".";
  node->confidence = Confidence(50);
  if (!old.vector.empty()) node->vector = Near(old.vector);
  w_.near_duplicates.emplace_back(f, i);
  return true;
}

bool Generator::PlantContradiction(uint32_t i, NodeInput* node) {
  if (statements_.empty()) return false;
  size_t pick = rnd_.Uniform(statements_.size());
  uint32_t f = statements_[pick];
  statements_[pick] = statements_.back();
  statements_.pop_back();
  const NodeInput& old = w_.nodes[f];
  static constexpr std::string_view kIs = " is enabled.";
  size_t at = old.content.find(kIs);
  assert(at != std::string::npos);
  node->type = NodeType::kFact;
  node->content = old.content.substr(0, at) + " is not enabled." +
                  old.content.substr(at + kIs.size());
  node->confidence = Confidence(50);
  if (!old.vector.empty()) node->vector = Near(old.vector);
  w_.contradictions.emplace_back(f, i);
  return true;
}

void Generator::PushEdge(uint32_t src, RelationId rel, uint32_t dst, const NodeInput& at) {
  EdgeInput e;
  e.src = w_.nodes[src].key;
  e.rel = BuiltinRelationName(rel);
  e.dst = w_.nodes[dst].key;
  e.weight = static_cast<float>(8 + rnd_.Uniform(57)) / 64.0f;
  e.ts = at.ts;
  e.run = at.run;
  e.task = at.task;
  w_.edges.push_back(std::move(e));
  endpoints_.push_back(src);
  endpoints_.push_back(dst);
}

void Generator::AddEdges(uint32_t i, NodeType type, std::optional<uint32_t> superseded,
                         int wanted, uint32_t range) {
  const NodeInput& node = w_.nodes[i];
  std::vector<std::pair<RelationId, uint32_t>> used;
  if (superseded) {
    PushEdge(i, kSupersedes, *superseded, node);
    used.emplace_back(kSupersedes, *superseded);
    --wanted;
  }
  const std::vector<RelationId> rels = RelationsFor(type);
  auto fresh = [&](RelationId r, uint32_t d) {
    return d != i && std::find(used.begin(), used.end(), std::make_pair(r, d)) == used.end();
  };
  for (int k = 0; k < wanted; ++k) {
    RelationId rel = 0;
    uint32_t dst = i;
    for (int attempt = 0; attempt < 64 && !fresh(rel, dst); ++attempt) {
      rel = rels[rnd_.Uniform(rels.size())];
      bool preferential = rnd_.OneIn(1, 2) && !endpoints_.empty();
      dst = preferential ? endpoints_[rnd_.Uniform(endpoints_.size())]
                         : static_cast<uint32_t>(rnd_.Uniform(range));
    }
    // Tiny graphs can exhaust the draws; take the first free pair in a fixed order.
    for (uint32_t d = 0; d < range && !fresh(rel, dst); ++d) {
      for (RelationId r : rels) {
        if (fresh(r, d)) {
          rel = r;
          dst = d;
          break;
        }
      }
    }
    if (!fresh(rel, dst)) break;
    used.emplace_back(rel, dst);
    PushEdge(i, rel, dst, node);
  }
}

Workload Generator::Run() {
  const uint64_t n = options_.num_nodes;
  assert(n < (uint64_t{1} << 31));
  assert(options_.session_size > 0);
  w_.nodes.reserve(n);
  w_.edges.reserve(3 * n);
  endpoints_.reserve(6 * n);
  superseded_.assign(n, false);

  struct Deferred {
    uint32_t i;
    NodeType type;
    std::optional<uint32_t> superseded;
    int wanted;
  };
  std::vector<Deferred> deferred;
  constexpr uint64_t kEarly = 8;
  uint32_t session_topic = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t session = i / options_.session_size;
    const uint32_t within = i % options_.session_size;
    if (within == 0) session_topic = static_cast<uint32_t>(rnd_.Uniform(kTopics));
    char buf[32];
    NodeInput node;
    node.ts = options_.start_ts + int64_t{session} * kSessionSeconds +
              int64_t{within} * kNodeSeconds;
    std::snprintf(buf, sizeof(buf), "run-%05u", session);
    node.run = buf;
    std::snprintf(buf, sizeof(buf), "task-%05u-%u", session, within / kTaskSize);
    node.task = buf;
    std::snprintf(buf, sizeof(buf), "project:p%u", session % 4);
    node.scope = buf;

    uint64_t u = rnd_.Uniform(10000);
    Plant plant = u < 300 ? Plant::kCorrection
                  : u < 500 ? Plant::kNearDuplicate
                  : u < 600 ? Plant::kContradiction
                            : Plant::kNone;
    std::optional<uint32_t> superseded;
    bool planted = false;
    uint32_t target = 0;
    switch (plant) {
      case Plant::kCorrection:
        planted = PlantCorrection(i, &node, &target);
        if (planted) superseded = target;
        break;
      case Plant::kNearDuplicate: planted = PlantNearDuplicate(i, &node); break;
      case Plant::kContradiction: planted = PlantContradiction(i, &node); break;
      case Plant::kNone: break;
    }
    const uint32_t module = static_cast<uint32_t>(rnd_.Uniform(kModules));
    if (!planted) {
      node.type = DrawType();
      if (node.type == NodeType::kFact && rnd_.OneIn(1, 20)) {
        node.content = "The " + RareWord() + " " + RareWord() + " is enabled.";
        AppendSentences(150 + rnd_.Uniform(101), &node.content);
        statements_.push_back(i);
      } else {
        node.content = Text();
      }
      bool sure = node.type == NodeType::kFact || node.type == NodeType::kDecision;
      node.confidence = Confidence(sure ? 50 : 30);
      if (node.type == NodeType::kFile) node.meta = R"({"lang":"cpp"})";
      if (node.type == NodeType::kEntity) node.meta = R"({"kind":"tool"})";
      if (options_.vectors) {
        uint32_t topic = rnd_.OneIn(7, 10) ? session_topic
                                           : static_cast<uint32_t>(rnd_.Uniform(kTopics));
        node.vector = Vector(topic);
      }
      if (node.type == NodeType::kFact) plain_facts_.push_back(i);
    }
    node.key = Key(node.type, i, module);
    const NodeType type = node.type;
    w_.nodes.push_back(std::move(node));
    // Every node but a session's first is the target of its predecessor's
    // temporal_next edge; the rest of its three edges leave it.
    int wanted = 3;
    if (within > 0) {
      PushEdge(i - 1, kTemporalNext, i, w_.nodes[i]);
      --wanted;
    }
    // The first nodes have too few predecessors for distinct targets: their edges
    // wait until the first kEarly nodes exist.
    if (i >= kEarly) {
      AddEdges(i, type, superseded, wanted, i);
    } else {
      deferred.push_back({i, type, superseded, wanted});
    }
  }
  if (n >= 2) {
    for (const Deferred& d : deferred) {
      AddEdges(d.i, d.type, d.superseded, d.wanted,
               static_cast<uint32_t>(std::min(n, kEarly)));
    }
  }
  return std::move(w_);
}

void AppendFloat(std::string* out, float f) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), f);
  out->append(buf, r.ptr);
}

void AppendJsonString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      *out += "\\u00";
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

void AppendField(std::string* out, const char* name, std::string_view value) {
  out->push_back(',');
  AppendJsonString(out, name);
  out->push_back(':');
  AppendJsonString(out, value);
}

void AppendAttribution(std::string* out, const std::optional<int64_t>& ts,
                       const std::optional<std::string>& run,
                       const std::optional<std::string>& task) {
  if (ts) *out += ",\"ts\":" + std::to_string(*ts);
  if (run) AppendField(out, "run", *run);
  if (task) AppendField(out, "task", *task);
}

void HashString(Hasher64* h, std::string_view s) {
  std::string len;
  PutFixed64(&len, s.size());
  h->Update(len);
  h->Update(s);
}

void HashOptional(Hasher64* h, const std::optional<std::string>& s) {
  HashString(h, s ? std::string_view(*s) : std::string_view("\xff"));
}

void HashFixed(Hasher64* h, uint64_t v) {
  std::string b;
  PutFixed64(&b, v);
  h->Update(b);
}

}  // namespace

Random::Random(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix64(&seed);
}

uint64_t Random::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t Random::Uniform(uint64_t n) {
  assert(n > 0);
  // Lemire's multiply-shift with rejection: unbiased and identical everywhere.
  for (;;) {
    uint64_t high, low;
    Multiply128(Next(), n, &high, &low);
    if (low >= n || low >= (0 - n) % n) return high;
  }
}

const std::vector<std::string>& Vocabulary() {
  static const std::vector<std::string> words = BuildVocabulary();
  return words;
}

int64_t WorkloadStartEndingNow(const WorkloadOptions& options) {
  const int64_t sessions = (options.num_nodes + options.session_size - 1) / options.session_size;
  // Today's start (UTC), not this second: programs run a few seconds apart (amem_gen
  // and ingest_bench in bench/ingest_cli_bench.sh) generate the same workload.
  constexpr int64_t kDay = 86400;
  const int64_t today = static_cast<int64_t>(std::time(nullptr)) / kDay * kDay;
  return today - (sessions + 1) * kSessionSeconds;
}

Workload GenerateWorkload(const WorkloadOptions& options) {
  return Generator(options).Run();
}

uint64_t WorkloadChecksum(const Workload& w) {
  Hasher64 h;
  HashFixed(&h, w.nodes.size());
  for (const NodeInput& n : w.nodes) {
    HashString(&h, n.key);
    HashFixed(&h, static_cast<uint64_t>(n.type));
    HashString(&h, n.content);
    HashString(&h, n.meta);
    std::string floats;
    PutFloat(&floats, n.confidence);
    for (float f : n.vector) PutFloat(&floats, f);
    HashString(&h, floats);
    HashFixed(&h, n.ts ? static_cast<uint64_t>(*n.ts) : ~uint64_t{0});
    HashOptional(&h, n.run);
    HashOptional(&h, n.task);
    HashOptional(&h, n.scope);
  }
  HashFixed(&h, w.edges.size());
  for (const EdgeInput& e : w.edges) {
    HashString(&h, e.src);
    HashString(&h, e.rel);
    HashString(&h, e.dst);
    std::string weight;
    PutFloat(&weight, e.weight);
    HashString(&h, weight);
    HashString(&h, e.payload);
    HashFixed(&h, e.ts ? static_cast<uint64_t>(*e.ts) : ~uint64_t{0});
    HashOptional(&h, e.run);
    HashOptional(&h, e.task);
  }
  return h.Digest();
}

std::string NodeToJsonLine(const NodeInput& n) {
  std::string out = R"({"op":"node")";
  AppendField(&out, "key", n.key);
  AppendField(&out, "type", NodeTypeName(n.type));
  AppendField(&out, "content", n.content);
  out += ",\"meta\":" + n.meta + ",\"confidence\":";
  AppendFloat(&out, n.confidence);
  if (!n.vector.empty()) {
    out += ",\"vector\":[";
    for (size_t d = 0; d < n.vector.size(); ++d) {
      if (d > 0) out.push_back(',');
      AppendFloat(&out, n.vector[d]);
    }
    out.push_back(']');
  }
  AppendAttribution(&out, n.ts, n.run, n.task);
  if (n.scope) AppendField(&out, "scope", *n.scope);
  out += "}\n";
  return out;
}

std::string EdgeToJsonLine(const EdgeInput& e) {
  std::string out = R"({"op":"edge")";
  AppendField(&out, "src", e.src);
  AppendField(&out, "rel", e.rel);
  AppendField(&out, "dst", e.dst);
  out += ",\"weight\":";
  AppendFloat(&out, e.weight);
  out += ",\"payload\":" + e.payload;
  AppendAttribution(&out, e.ts, e.run, e.task);
  out += "}\n";
  return out;
}

bool WriteJsonLines(const Workload& w, std::FILE* out) {
  for (const NodeInput& n : w.nodes) {
    std::string line = NodeToJsonLine(n);
    if (std::fwrite(line.data(), 1, line.size(), out) != line.size()) return false;
  }
  for (const EdgeInput& e : w.edges) {
    std::string line = EdgeToJsonLine(e);
    if (std::fwrite(line.data(), 1, line.size(), out) != line.size()) return false;
  }
  return std::fflush(out) == 0;
}

StoreState StateOfWorkload(const Workload& w, uint32_t dimension) {
  StoreState s;
  s.dimension = dimension;
  s.revision = 1;
  for (int r = 0; r < kBuiltinRelationCount; ++r) {
    s.relations.emplace_back(static_cast<RelationId>(r),
                             BuiltinRelationName(static_cast<RelationId>(r)));
  }
  s.nodes.reserve(w.nodes.size());
  for (const NodeInput& in : w.nodes) {
    NodeRecord n;
    n.id = NodeIdForKey(in.key);
    n.key = in.key;
    n.type = in.type;
    n.content = in.content;
    n.meta = in.meta;
    n.confidence = in.confidence;
    n.scope = in.scope.value_or("");
    n.run = in.run.value_or("");
    n.task = in.task.value_or("");
    n.created_ts = n.updated_ts = in.ts.value_or(0);
    n.rev = 1;
    n.vector = in.vector;
    s.revision_ts = std::max(s.revision_ts, n.created_ts);
    s.nodes.push_back(std::move(n));
  }
  s.edges.reserve(w.edges.size());
  for (const EdgeInput& in : w.edges) {
    EdgeRecord e;
    e.src_key = in.src;
    e.dst_key = in.dst;
    e.src = NodeIdForKey(in.src);
    e.dst = NodeIdForKey(in.dst);
    std::optional<RelationId> rel = ParseBuiltinRelation(in.rel);
    if (!rel) Die("workload", "relation is not built in: " + in.rel);
    e.rel = *rel;
    e.rel_name = in.rel;
    e.weight = in.weight;
    e.payload = in.payload;
    e.run = in.run.value_or("");
    e.task = in.task.value_or("");
    e.created_ts = e.updated_ts = in.ts.value_or(0);
    e.rev = 1;
    s.edges.push_back(std::move(e));
  }
  return s;
}

}  // namespace amem::bench
