#include "query/consolidate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>

#include "common/hash.h"
#include "common/hash_sort.h"
#include "common/progress.h"
#include "common/tokenizer.h"
#include "query/internal/cog_graph.h"
#include "query/internal/jaccard_join.h"
#include "query/internal/negation.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

// Each node's distinct content words (negations excluded) as ranks in one global
// order, rarest first: (content document frequency, word bytes). Both paths below
// give the same ranks, so findings never depend on whether the file has a term
// index.
struct DocTerms {
  std::vector<uint32_t> offsets;  // n + 1
  std::vector<uint32_t> ranks;    // per node ascending
  std::vector<uint8_t> negated;   // an odd number of negation words (negation.h)
  std::vector<uint64_t> hash;     // of the ranks: equal word sets, equal hashes

  std::span<const uint32_t> of(uint32_t i) const {
    return {ranks.data() + offsets[i], ranks.data() + offsets[i + 1]};
  }
  uint32_t size(uint32_t i) const { return offsets[i + 1] - offsets[i]; }
  WordSets sets() const { return {offsets, ranks}; }
};

// Terms ordered by (df, name), and rank[t], the position of term t in that order;
// `name_of(t)` gives the name of term t.
struct TermOrder {
  std::vector<uint32_t> order, rank;
};
template <typename NameOf>
TermOrder RankTerms(const std::vector<uint32_t>& df, NameOf&& name_of) {
  TermOrder o;
  o.order.resize(df.size());
  std::iota(o.order.begin(), o.order.end(), 0u);
  std::sort(o.order.begin(), o.order.end(), [&](uint32_t a, uint32_t b) {
    if (df[a] != df[b]) return df[a] < df[b];
    return name_of(a) < name_of(b);
  });
  o.rank.resize(df.size());
  for (uint32_t k = 0; k < o.order.size(); ++k) o.rank[o.order[k]] = k;
  return o;
}

// Turns per-term postings into per-node rank lists. `list_of(t)` gives term t's
// postings: size(), node(k) (ascending) and tf(k) (occurrences). Terms are read in
// rank order, so each node's ranks come out ascending.
template <typename ListOf>
void FillDocTerms(uint32_t n, const TermOrder& o, const std::vector<uint8_t>& is_negation,
                  ListOf&& list_of, DocTerms* d) {
  d->negated.assign(n, 0);
  d->offsets.assign(n + 1, 0);
  for (uint32_t t : o.order) {
    auto pl = list_of(t);
    if (is_negation[t]) {
      for (uint32_t k = 0; k < pl.size(); ++k) d->negated[pl.node(k)] ^= pl.tf(k) & 1;
    } else {
      for (uint32_t k = 0; k < pl.size(); ++k) ++d->offsets[pl.node(k) + 1];
    }
  }
  std::partial_sum(d->offsets.begin(), d->offsets.end(), d->offsets.begin());
  d->ranks.resize(d->offsets[n]);
  std::vector<uint32_t> fill(d->offsets.begin(), d->offsets.end() - 1);
  for (uint32_t t : o.order) {
    if (is_negation[t]) continue;
    auto pl = list_of(t);
    for (uint32_t k = 0; k < pl.size(); ++k) d->ranks[fill[pl.node(k)]++] = o.rank[t];
  }
  d->hash.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::span<const uint32_t> terms = d->of(i);
    d->hash[i] = Hash64(terms.data(), terms.size_bytes(), 0);
  }
}

DocTerms BuildDocTerms(const snapshot::Reader& r) {
  const uint32_t n = r.node_count();
  DocTerms d;
  if (r.has_term_index()) {
    const uint32_t terms = r.term_count();
    std::vector<uint32_t> df(terms);
    std::vector<uint8_t> neg(terms);
    for (uint32_t t = 0; t < terms; ++t) {
      df[t] = r.doc_frequency(t);
      neg[t] = IsNegationWord(r.term(t));
    }
    // Term ids are in byte order already, so (df, id) is (df, name).
    TermOrder o = RankTerms(df, [](uint32_t t) { return t; });
    FillDocTerms(
        n, o, neg, [&](uint32_t t) { return r.postings(t, snapshot::Field::kContent); }, &d);
    return d;
  }
  // No term index: tokenize every content once into a local dictionary.
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string> names;
  struct Posting {
    uint32_t node, term, tf;
  };
  std::vector<Posting> postings;
  std::vector<uint32_t> doc;
  for (uint32_t i = 0; i < n; ++i) {
    doc.clear();
    ForEachToken(r.content(i), [&](std::string_view tok) {
      auto [it, inserted] = ids.try_emplace(std::string(tok), static_cast<uint32_t>(names.size()));
      if (inserted) names.emplace_back(tok);
      doc.push_back(it->second);
    });
    std::sort(doc.begin(), doc.end());
    for (size_t a = 0; a < doc.size();) {
      size_t b = a;
      while (b < doc.size() && doc[b] == doc[a]) ++b;
      postings.push_back({i, doc[a], static_cast<uint32_t>(b - a)});
      a = b;
    }
  }
  const auto terms = static_cast<uint32_t>(names.size());
  std::vector<uint32_t> df(terms, 0);
  std::vector<uint8_t> neg(terms);
  for (const Posting& p : postings) ++df[p.term];
  for (uint32_t t = 0; t < terms; ++t) neg[t] = IsNegationWord(names[t]);
  TermOrder o = RankTerms(df, [&](uint32_t t) -> const std::string& { return names[t]; });
  // Postings by term (a counting sort; nodes stay ascending within each term).
  std::vector<uint32_t> start(terms + 1, 0);
  for (uint32_t t = 0; t < terms; ++t) start[t + 1] = start[t] + df[t];
  std::vector<Posting> by_term(postings.size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (const Posting& p : postings) by_term[fill[p.term]++] = p;
  }
  struct TermList {
    const Posting* p;
    uint32_t n;
    uint32_t size() const { return n; }
    uint32_t node(uint32_t k) const { return p[k].node; }
    uint32_t tf(uint32_t k) const { return p[k].tf; }
  };
  FillDocTerms(n, o, neg, [&](uint32_t t) {
    return TermList{by_term.data() + start[t], start[t + 1] - start[t]};
  }, &d);
  return d;
}

bool AlreadyLinked(const snapshot::Reader& r, uint32_t a, uint32_t b) {
  return Linked(r, a, b, kSupersedes) || Linked(r, a, b, kContradicts);
}

bool IsBelief(NodeType t) {
  return t == NodeType::kFact || t == NodeType::kDecision || t == NodeType::kInference ||
         t == NodeType::kConstraint || t == NodeType::kCorrection;
}

// A node is newer than another by created_ts, then by index.
bool Newer(const snapshot::Reader& r, uint32_t a, uint32_t b) {
  if (r.created_ts(a) != r.created_ts(b)) return r.created_ts(a) > r.created_ts(b);
  return a > b;
}

// Winner of a duplicate cluster: higher confidence, then newer, then smaller index.
bool Wins(const snapshot::Reader& r, uint32_t a, uint32_t b) {
  if (r.confidence(a) != r.confidence(b)) return r.confidence(a) > r.confidence(b);
  if (r.created_ts(a) != r.created_ts(b)) return r.created_ts(a) > r.created_ts(b);
  return a < b;
}

// Sorts (word-set hash, node) pairs so that nodes with equal word sets are adjacent,
// each run ascending by node, and calls fn(begin, end) for each run [begin, end).
template <typename Fn>
void ForEachWordSet(const DocTerms& d, std::vector<std::pair<uint64_t, uint32_t>>* keyed,
                    Fn&& fn) {
  SortByHash(keyed, [](const auto& k) { return k.first; }, std::less<>());
  auto by_words = [&](const auto& a, const auto& b) {
    std::span<const uint32_t> at = d.of(a.second), bt = d.of(b.second);
    if (!std::ranges::equal(at, bt)) return std::ranges::lexicographical_compare(at, bt);
    return a.second < b.second;
  };
  const auto& k = *keyed;
  for (size_t h = 0; h < k.size();) {
    size_t h_end = h + 1;
    while (h_end < k.size() && k[h_end].first == k[h].first) ++h_end;
    // Different word sets with one hash: order that run by the words.
    for (size_t i = h + 1; i < h_end; ++i) {
      if (!std::ranges::equal(d.of(k[i].second), d.of(k[h].second))) {
        std::sort(keyed->begin() + h, keyed->begin() + h_end, by_words);
        break;
      }
    }
    for (size_t g = h; g < h_end;) {
      size_t g_end = g + 1;
      while (g_end < h_end && std::ranges::equal(d.of(k[g_end].second), d.of(k[g].second))) {
        ++g_end;
      }
      fn(g, g_end);
      g = g_end;
    }
    h = h_end;
  }
}

// Connected components over dense indices. The smaller root becomes the parent, so
// the partition and every root are independent of the order of the joins.
class Components {
 public:
  explicit Components(uint32_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0u);
  }
  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];  // path halving
    return x;
  }
  void Join(uint32_t a, uint32_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<uint32_t> parent_;
};

// Similar pairs (same type once this plan's promotions are applied, same polarity,
// Jaccard >= t) are joined into clusters; each cluster's winner (Wins) is planned
// to supersede every other member it is not linked with yet.
void FindDuplicates(const snapshot::Reader& r, const DocTerms& d, double t,
                    const std::vector<uint8_t>& promoted, ConsolidatePlan* plan) {
  const uint32_t n = r.node_count();
  // Groups: (type after promotion, polarity), by a counting sort.
  auto group_of = [&](uint32_t i) {
    uint32_t type = promoted[i] ? static_cast<uint32_t>(NodeType::kFact) : r.type_code(i);
    return type * 2u + d.negated[i];
  };
  constexpr uint32_t kGroups = 256 * 2;
  std::vector<uint32_t> start(kGroups + 1, 0);
  auto takes_part = [&](uint32_t i) { return !r.is_stub(i) && d.size(i) > 0; };
  for (uint32_t i = 0; i < n; ++i) {
    if (takes_part(i)) ++start[group_of(i) + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<uint32_t> nodes(start.back());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      if (takes_part(i)) nodes[fill[group_of(i)]++] = i;
    }
  }

  std::vector<std::pair<uint64_t, uint32_t>> keyed;  // (word-set hash, node)
  std::vector<uint32_t> reps;
  std::vector<uint64_t> copies(n, 0);  // a representative's nodes with its word set
  Components clusters(n);
  uint64_t similar = 0;
  for (uint32_t g = 0; g < kGroups; ++g) {
    if (start[g + 1] - start[g] < 2) continue;
    keyed.clear();
    for (uint32_t k = start[g]; k < start[g + 1]; ++k) {
      keyed.emplace_back(d.hash[nodes[k]], nodes[k]);
    }
    // Nodes with identical word sets are one cluster already; only the first (by
    // index) of each set takes part in the candidate search, so that many exact
    // copies cost a sort, not a quadratic number of candidate pairs.
    ForEachWordSet(d, &keyed, [&](size_t begin, size_t end) {
      uint32_t rep = keyed[begin].second;
      for (size_t k = begin + 1; k < end; ++k) clusters.Join(rep, keyed[k].second);
      copies[rep] = end - begin;
      similar += (end - begin) * (end - begin - 1) / 2;
    });
    // Ascending, so that the join reads the word lists in memory order.
    reps.clear();
    for (uint32_t k = start[g]; k < start[g + 1]; ++k) {
      if (copies[nodes[k]] > 0) reps.push_back(nodes[k]);
    }
    for (auto [x, y] : SimilarPairs(d.sets(), reps, t)) {
      clusters.Join(x, y);
      similar += copies[x] * copies[y];
    }
  }
  plan->similar_pairs = similar;

  // One winner per cluster; one planned edge per other member.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> winner(n, kNone), members(n, 0);
  for (uint32_t i : nodes) {
    uint32_t c = clusters.Find(i);
    ++members[c];
    if (winner[c] == kNone || Wins(r, i, winner[c])) winner[c] = i;
  }
  for (uint32_t i : nodes) {
    uint32_t c = clusters.Find(i), w = winner[c];
    if (members[c] < 2 || i == w || AlreadyLinked(r, w, i)) continue;
    plan->duplicates.push_back({w, i, WordJaccard(d.of(w), d.of(i))});
  }
  std::sort(plan->duplicates.begin(), plan->duplicates.end(),
            [](const DuplicatePair& a, const DuplicatePair& b) {
              if (a.keep != b.keep) return a.keep < b.keep;
              if (a.similarity != b.similarity) return a.similarity > b.similarity;
              return a.drop < b.drop;
            });
}

// Inside each set of belief nodes with equal word sets, every node is planned to
// contradict one representative of the other polarity (the Wins-best one) unless
// the two are linked already: |set| - 1 pairs at most, never all pairs.
void FindContradictions(const snapshot::Reader& r, const DocTerms& d, ConsolidatePlan* plan) {
  std::vector<std::pair<uint64_t, uint32_t>> keyed;  // (word-set hash, node)
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    if (r.is_stub(i) || d.size(i) == 0 || !IsBelief(r.type(i))) continue;
    keyed.emplace_back(d.hash[i], i);
  }
  constexpr uint32_t kNone = UINT32_MAX;
  ForEachWordSet(d, &keyed, [&](size_t g, size_t g_end) {
    uint32_t rep[2] = {kNone, kNone};  // per polarity
    for (size_t k = g; k < g_end; ++k) {
      uint32_t x = keyed[k].second;
      uint32_t& best = rep[d.negated[x]];
      if (best == kNone || Wins(r, x, best)) best = x;
    }
    if (rep[0] != kNone && rep[1] != kNone) {
      for (size_t k = g; k < g_end; ++k) {
        uint32_t x = keyed[k].second, y = rep[1 - d.negated[x]];
        if (x == rep[1] || AlreadyLinked(r, x, y)) continue;  // rep[1]: met via rep[0]
        bool x_newer = Newer(r, x, y);
        plan->contradictions.push_back({x_newer ? x : y, x_newer ? y : x});
      }
    }
  });
  std::sort(plan->contradictions.begin(), plan->contradictions.end(),
            [](const ContradictionPair& a, const ContradictionPair& b) {
              uint32_t amin = std::min(a.src, a.dst), bmin = std::min(b.src, b.dst);
              if (amin != bmin) return amin < bmin;
              return std::max(a.src, a.dst) < std::max(b.src, b.dst);
            });
}

}  // namespace

Result<ConsolidatePlan> PlanConsolidation(const snapshot::Reader& r,
                                          const ConsolidateOptions& options) {
  double t = options.dedup_threshold;
  if (!(t > 0 && t <= 1)) {
    return Status::InvalidArgument("consolidate: --dedup-threshold must be in (0, 1]");
  }
  // Every text is compared, and a plan may be applied: all of them now, and a
  // damaged block is an error rather than texts reading as "".
  AMEM_RETURN_IF_ERROR(r.DecodeAllContent());
  ConsolidatePlan plan;
  Progress progress("consolidate");
  progress.Stage("indexing the terms of " + std::to_string(r.node_count()) + " nodes");
  DocTerms d = BuildDocTerms(r);
  // Promotions first: duplicates are grouped by the type a node has after them, so
  // that one --execute reaches a fixed point.
  progress.Stage("promotions and orphans");
  std::vector<uint8_t> promoted(r.node_count(), 0);
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    if (r.is_stub(i)) continue;
    if (r.type(i) == NodeType::kInference && r.confidence(i) > 0.9f &&
        DistinctSupporters(r, i, 3) >= 3) {
      plan.promotions.push_back(i);
      promoted[i] = 1;
    }
    if (r.in_degree(i) == 0 && r.out_degree(i) == 0) plan.orphans.push_back(i);
  }
  progress.Stage("finding duplicates");
  FindDuplicates(r, d, t, promoted, &plan);
  progress.Stage("finding contradictions");
  FindContradictions(r, d, &plan);
  return plan;
}

Result<ApplyReport> ApplyConsolidation(Store& store, const snapshot::Reader& r,
                                       const ConsolidatePlan& plan,
                                       const WriteOptions& options) {
  auto key = [&](uint32_t i) { return std::string(r.key(i)); };
  ApplyReport report;
  Batch batch;
  auto add_edge = [&](uint32_t src, const char* rel, uint32_t dst) -> Status {
    if (r.key(src).empty() || r.key(dst).empty()) {
      return Status::InvalidArgument("consolidate: the snapshot has no node keys");
    }
    EdgeInput e;
    e.src = key(src);
    e.rel = rel;
    e.dst = key(dst);
    e.payload = R"({"by":"consolidate"})";
    batch.PutEdge(std::move(e));
    return Status::OK();
  };
  for (const DuplicatePair& p : plan.duplicates) {
    AMEM_RETURN_IF_ERROR(add_edge(p.keep, "supersedes", p.drop));
    ++report.supersedes_written;
  }
  for (const ContradictionPair& p : plan.contradictions) {
    AMEM_RETURN_IF_ERROR(add_edge(p.src, "contradicts", p.dst));
    ++report.contradicts_written;
  }
  for (uint32_t i : plan.promotions) {
    Result<NodeRecord> rec = store.GetNode(key(i));
    if (!rec.ok() && !rec.status().IsNotFound()) return rec.status();
    if (!rec.ok() || rec->type != NodeType::kInference) {
      report.skipped.push_back(key(i));
      continue;
    }
    NodeInput in;
    in.key = rec->key;
    in.type = NodeType::kFact;
    in.content = std::move(rec->content);
    in.meta = std::move(rec->meta);
    in.confidence = rec->confidence;
    in.vector = std::move(rec->vector);
    in.run = rec->run;
    in.task = rec->task;
    in.scope = rec->scope;
    batch.PutNode(std::move(in));
    ++report.promoted;
  }
  Result<uint64_t> rev = store.Apply(batch, options);
  if (!rev.ok()) return rev.status();
  report.revision = *rev;
  return report;
}

}  // namespace amem::query
