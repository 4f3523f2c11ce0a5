// Base + delta read as one graph (docs/FORMAT.md §11.5). Build() is O(changes);
// accessors look up on use; BuildOut/In/Time() make flat tables on demand.
#include "snapshot/internal/layered.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "common/coding.h"
#include "common/free_vector.h"

namespace amem::snapshot {

namespace {

Status Corrupt(std::string_view what) {
  return Status::Corruption("base + delta: " + std::string(what));
}

void PutPosting(std::string* out, uint32_t node, uint32_t tf, Field field) {
  char buf[kPostingLength];
  EncodeFixed32(buf, node);
  EncodeFixed32(buf + 4, (static_cast<uint32_t>(field) << 24) | tf);
  out->append(buf, sizeof buf);
}

}  // namespace

Result<std::unique_ptr<Reader>> Reader::OpenLayered(std::shared_ptr<const Reader> base,
                                                    std::shared_ptr<const Delta> delta) {
  if (!base || !delta) return Status::InvalidArgument("OpenLayered: no base or no delta");
  if (!base->has_extensions()) {
    return Status::InvalidArgument("OpenLayered: the base has no amem extension blocks");
  }
  auto layer = std::make_shared<Layer>();
  layer->base = std::move(base);
  layer->delta = std::move(delta);
  std::unique_ptr<Reader> r(new Reader());
  AMEM_RETURN_IF_ERROR(layer->Build(r.get()));
  r->layer_ = layer.get();
  r->layer_holder_ = std::move(layer);
  return r;
}

const std::shared_ptr<const Reader>& Reader::layer_base() const {
  static const std::shared_ptr<const Reader> kNone;
  return layer_ ? layer_->base : kNone;
}

const std::shared_ptr<const Delta>& Reader::layer_delta() const {
  static const std::shared_ptr<const Delta> kNone;
  return layer_ ? layer_->delta : kNone;
}

Status Reader::Layer::Build(Reader* r) {
  const Reader& b = *base;
  const DeltaTotals& t = delta->totals();
  if (dn().dimension() != 0 && b.dimension() != 0 && dn().dimension() != b.dimension()) {
    return Corrupt("the delta's vectors have another dimension than the base's");
  }
  r->version_ = b.version_;
  r->features_ = b.features_;
  r->dimension_ = b.dimension() != 0 ? b.dimension() : dn().dimension();
  r->node_count_ = t.node_count;
  r->edge_count_ = t.edge_count;
  r->stub_count_ = t.stub_count;
  r->kv_count_ = t.kv_count;
  r->session_count_ = t.session_count;
  r->newest_ts_ = t.newest_ts;
  r->size_ = b.file_size() + delta->size();
  r->content_length_ = b.content_length_;
  r->content_uncompressed_ = b.content_uncompressed_;
  r->cluster_count_ = 0;
  r->blocks_ = b.blocks_;
  if (t.node_count == 0 && t.edge_count != 0) return Corrupt("edges without nodes");
  AMEM_RETURN_IF_ERROR(BuildNodes(r));
  AMEM_RETURN_IF_ERROR(BuildPoint(r));
  AMEM_RETURN_IF_ERROR(BuildTerms());
  r->time_count_ = r->node_count_;
  r->lazy_pending_.store(kLazyOut | kLazyIn | kLazyTime, std::memory_order_release);
  r->term_count_ = base_terms + static_cast<uint32_t>(new_terms.size());

  // kv: the base's entries less the removed ones, the delta's inserted at their gaps.
  std::vector<MergedSequence::Range> removed;
  for (uint32_t k : delta->removed_kv()) removed.push_back({k, k + 1});
  std::vector<MergedSequence::Block> blocks;
  for (uint32_t k = 0; k < delta->kv_count(); ++k) blocks.push_back({delta->kv(k).gap, 1});
  auto seq = MergedSequence::Make(b.kv_count(), std::move(removed), std::move(blocks));
  if (!seq.ok()) return Corrupt("kv: " + seq.status().message());
  kv = std::move(*seq);
  if (kv.size() != t.kv_count) return Corrupt("kv count differs from the totals");

  // Doc lengths: the base's sum plus the delta's change, as a full export averages.
  b.LoadDocLengths();  // a file base sums its doc lengths on first use
  const int64_t sum = static_cast<int64_t>(b.doc_length_sum_) + t.doc_length_change;
  if (sum < 0) return Corrupt("negative document length sum");
  r->doc_length_sum_ = static_cast<uint64_t>(sum);
  r->avg_doc_length_ =
      r->node_count_ ? static_cast<double>(sum) / static_cast<double>(r->node_count_) : 0.0;
  return Status::OK();
}

Status Reader::Layer::BuildNodes(Reader* r) {
  const Reader& b = *base;
  const Delta& dl = *delta;
  const uint32_t nb = b.node_count(), nd = dl.node_count();
  for (uint32_t x : dl.removed()) {
    if (x >= nb) return Corrupt("removed node out of range");
  }
  for (uint32_t d = 0; d < nd; ++d) {
    uint32_t slot = dl.base_slot(d);
    if (slot == kNoNode) continue;
    if (slot >= nb || (!replaced.empty() && slot <= replaced.back().first)) {
      return Corrupt("replaced node out of range or out of order");
    }
    replaced.emplace_back(slot, d);
  }
  auto seq = NodeSequence(b, dl);
  if (!seq.ok()) return Corrupt("nodes: " + seq.status().message());
  nodes = std::move(*seq);
  if (nodes.size() != r->node_count_) return Corrupt("node count differs from the totals");

  // Sessions: the base's less the removed ones, the delta's new runs at their gaps
  // (Delta::ParseRuns checked their order against the base's runs). A session's
  // range is counted when it is asked (SessionBegin), never built for all of them.
  std::vector<MergedSequence::Range> gone;
  for (uint32_t s : dl.removed_sessions()) gone.push_back({s, s + 1});
  std::vector<MergedSequence::Block> runs_in;
  for (uint32_t gap : dl.new_run_gaps()) runs_in.push_back({gap, 1});
  auto sseq = MergedSequence::Make(b.session_count(), std::move(gone), std::move(runs_in));
  if (!sseq.ok()) return Corrupt("runs: " + sseq.status().message());
  session_seq = std::move(*sseq);
  if (session_seq.size() != r->session_count_) return Corrupt("runs and session count differ");
  for (uint32_t s : dl.removed_sessions()) {
    const SessionRange range = b.session_range(s);
    if (range.begin > range.end || range.end > nb) return Corrupt("a base session's range");
    if (nodes.KeptIn(range.begin, range.end) != 0) {
      return Corrupt("a kept base node's run is not among the runs");
    }
  }
  delta_session.resize(dn().session_count());
  for (uint32_t s = 0; s < dn().session_count(); ++s) {
    delta_session[s] = FindMergedSession(dn().session_run(s));
    if (delta_session[s] == kNoNode || (s > 0 && delta_session[s] <= delta_session[s - 1])) {
      return Corrupt("a delta node's run is not among the runs");
    }
  }
  r->UseLayerNames();
  // A non-null marker: document lengths are read through LayeredDocLength.
  r->doc_lengths_ = b.doc_lengths_;

  // Any vector at H: the delta's nodes, else the first kept base node with one.
  bool any_vector = false;
  for (uint32_t d = 0; d < nd && !any_vector; ++d) any_vector = dn().vector(d) != nullptr;
  if (!any_vector && b.has_vectors()) {
    for (uint32_t x = 0; x < nb && !any_vector; ++x) any_vector = BaseKept(x) && b.vector(x) != nullptr;
  }
  r->flags_ = static_cast<uint16_t>((b.flags_ & ~kFlagHasVectors) | (any_vector ? kFlagHasVectors : 0));
  return Status::OK();
}

Status Reader::Layer::BuildPoint(Reader* r) {
  const Reader& b = *base;
  const Delta& dl = *delta;
  const uint32_t nb = b.node_count();
  // The base slot a delta list's node takes (kNoNode: a new place) and the base
  // position its list goes before.
  auto slot_of = [&](uint32_t ref) {
    return IsDeltaRef(ref) ? dl.base_slot(ref & ~kDeltaNode) : ref;
  };
  auto place_of = [&](uint32_t ref) {
    uint32_t slot = slot_of(ref);
    return slot != kNoNode ? slot : dl.gap(ref & ~kDeltaNode);
  };
  struct Side {
    uint32_t lists;
    uint32_t (Delta::*node)(uint32_t) const;
    uint32_t (Delta::*begin)(uint32_t) const;
    uint32_t (Reader::*base_begin)(uint32_t) const;
    uint32_t (Reader::*base_end)(uint32_t) const;
    uint32_t base_total;
    std::vector<uint32_t>* merged;
    MergedSequence* seq;
    const char* what;
  };
  const Side sides[2] = {
      {dl.out_list_count(), &Delta::out_source, &Delta::out_begin, &Reader::out_begin,
       &Reader::out_end, b.edge_count(), &out_src, &edge_seq, "out-lists"},
      {dl.in_list_count(), &Delta::in_target, &Delta::in_begin, &Reader::in_begin,
       &Reader::in_end, b.edge_count(), &in_tgt, &in_seq, "in-lists"},
  };
  for (const Side& side : sides) {
    std::vector<uint32_t> dropped(dl.removed().begin(), dl.removed().end());
    std::vector<MergedSequence::Block> blocks;
    side.merged->resize(side.lists);
    for (uint32_t k = 0; k < side.lists; ++k) {
      const uint32_t ref = (dl.*side.node)(k);
      const uint32_t m = MapRef(ref);
      if (m == kNoNode || (k > 0 && m <= (*side.merged)[k - 1])) {
        return Corrupt(std::string(side.what) + " are not in node order");
      }
      (*side.merged)[k] = m;
      if (slot_of(ref) != kNoNode) dropped.push_back(slot_of(ref));
      const uint32_t at = place_of(ref);
      blocks.push_back({at < nb ? (b.*side.base_begin)(at) : side.base_total,
                        (dl.*side.begin)(k + 1) - (dl.*side.begin)(k)});
    }
    std::sort(dropped.begin(), dropped.end());
    dropped.erase(std::unique(dropped.begin(), dropped.end()), dropped.end());
    std::vector<MergedSequence::Range> ranges;
    for (uint32_t x : dropped) ranges.push_back({(b.*side.base_begin)(x), (b.*side.base_end)(x)});
    auto seq = MergedSequence::Make(side.base_total, std::move(ranges), std::move(blocks));
    if (!seq.ok()) return Corrupt(std::string(side.what) + ": " + seq.status().message());
    if (seq->size() != r->edge_count_) return Corrupt(std::string(side.what) + ": edge count differs");
    *side.seq = std::move(*seq);
  }
  for (uint32_t x = 0; x < dl.edge_count(); ++x) {
    const uint32_t be = dl.edge(x).base_edge;
    if (be == kNoNode) continue;
    if (be >= b.edge_count()) return Corrupt("a copied base edge is out of range");
    copied.emplace_back(be, x);
  }
  std::sort(copied.begin(), copied.end());
  point_limit = std::max<uint64_t>(uint64_t{1} << 12, (uint64_t{r->node_count_} + r->edge_count_) / 16);
  return Status::OK();
}

uint32_t Reader::Layer::EdgeOfBase(uint32_t e) const {
  if (!edge_seq.IsRemoved(e)) return edge_seq.OfBase(e);
  auto it = std::lower_bound(copied.begin(), copied.end(), std::make_pair(e, uint32_t{0}));
  if (it != copied.end() && it->first == e) return edge_seq.OfDelta(it->second);
  return kNoNode;
}

void Reader::Layer::Fail(Status s) const {
  std::lock_guard<std::mutex> lock(failure_mu);
  if (failed.load(std::memory_order_relaxed)) return;
  failure = std::move(s);
  failed.store(true, std::memory_order_release);
}

Status Reader::Layer::Failure() const {
  if (!failed.load(std::memory_order_acquire)) return Status::OK();
  std::lock_guard<std::mutex> lock(failure_mu);
  return failure;
}

Edge Reader::Layer::PointEdge(uint32_t j) const {
  const Reader& b = *base;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  // A node number at H, else a Fail() and node 0 (there are nodes when there are edges).
  auto node = [&](uint32_t m, const char* what) {
    if (m < n) return m;
    Fail(Corrupt(std::string("edge ") + std::to_string(j) + ": " + what + " is no node at H"));
    return uint32_t{0};
  };
  if (j >= edge_seq.size()) {
    Fail(Corrupt("edge " + std::to_string(j) + " out of range"));
    return {0, 0, 0, 0.0f};
  }
  MergedSequence::Item it = edge_seq.At(j);
  if (!it.delta) {
    const uint32_t e = it.index;
    return {node(OfBase(b.edge_source(e)), "its source"), node(OfBase(b.edge_target(e)), "its target"),
            delta->merged_relation(b.edge_rel(e)), b.edge_weight(e)};
  }
  // The out-list holding delta edge x: the last k with out_begin(k) <= x.
  const uint32_t x = it.index;
  if (x >= delta->edge_count() || delta->out_list_count() == 0) {
    Fail(Corrupt("edge " + std::to_string(j) + " names no delta edge"));
    return {0, 0, 0, 0.0f};
  }
  uint32_t lo = 0, hi = delta->out_list_count();
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (delta->out_begin(mid) <= x) lo = mid; else hi = mid;
  }
  DeltaEdge d = delta->edge(x);
  return {node(out_src[lo], "its source"), node(MapRef(d.target), "its target"), d.rel, d.weight};
}

uint32_t Reader::Layer::PointList(ListPart part, uint32_t x) const {
  const Reader& b = *base;
  const Delta& dl = *delta;
  const uint32_t m = edge_seq.size();
  if (part == ListPart::kInEdge) {
    // An edge number at H, else a Fail() and edge 0 (an in-list position means edges).
    auto edge = [&](uint32_t e) {
      if (e < m) return e;
      Fail(Corrupt("in-list entry " + std::to_string(x) + " names no edge"));
      return uint32_t{0};
    };
    if (x >= in_seq.size()) return edge(kNoNode);
    MergedSequence::Item it = in_seq.At(x);
    if (!it.delta) {
      // A base entry names an edge into the node whose base in-range holds it (the
      // base's in-index is read here unchecked; a damaged one must not steer).
      const uint32_t q = it.index, e = b.in_edge(q);
      const uint32_t t = e < b.edge_count() ? b.edge_target(e) : kNoNode;
      if (t >= b.node_count() || q < b.in_begin(t) || q >= b.in_end(t)) return edge(kNoNode);
      return edge(EdgeOfBase(e));
    }
    const uint32_t ref = dl.in_entry(it.index);
    return edge(IsDeltaRef(ref) ? edge_seq.OfDelta(ref & ~kDeltaNode) : EdgeOfBase(ref));
  }
  const uint32_t list = ListBound(part, x);
  if (list <= m) return list;
  Fail(Corrupt("the edge list of node " + std::to_string(x) + " passes the edge count"));
  return m;
}

uint32_t Reader::Layer::ListBound(ListPart part, uint32_t x) const {
  const Reader& b = *base;
  const Delta& dl = *delta;
  const bool out = part == ListPart::kOutBegin || part == ListPart::kOutEnd;
  const uint32_t i = x;
  const uint32_t ref = Ref(i);
  const uint32_t slot = IsDeltaRef(ref) ? dl.base_slot(ref & ~kDeltaNode) : ref;
  const uint32_t at = slot != kNoNode ? slot : dl.gap(ref & ~kDeltaNode);
  const uint32_t pos = at < b.node_count() ? (out ? b.out_begin(at) : b.in_begin(at)) : b.edge_count();
  const std::vector<uint32_t>& lists = out ? out_src : in_tgt;
  const uint32_t k = static_cast<uint32_t>(std::lower_bound(lists.begin(), lists.end(), i) - lists.begin());
  const uint32_t begin = (out ? edge_seq : in_seq).KeptIn(0, pos) + (out ? dl.out_begin(k) : dl.in_begin(k));
  if (part == ListPart::kOutBegin || part == ListPart::kInBegin) return begin;
  uint32_t degree = 0;
  if (k < lists.size() && lists[k] == i) {
    degree = out ? dl.out_begin(k + 1) - dl.out_begin(k) : dl.in_begin(k + 1) - dl.in_begin(k);
  } else if (slot != kNoNode) {
    degree = out ? b.out_degree(slot) : b.in_degree(slot);
  }
  return begin + degree;
}

uint32_t Reader::Layer::OfBase(uint32_t b) const {
  if (flat_ref.load(std::memory_order_acquire) != nullptr) return base_to_merged[b];
  if (!nodes.IsRemoved(b)) return nodes.OfBase(b);
  auto it = std::lower_bound(replaced.begin(), replaced.end(), std::make_pair(b, uint32_t{0}));
  if (it != replaced.end() && it->first == b) return nodes.OfDelta(it->second);
  return kNoNode;
}

Status Reader::Layer::BuildOut(Reader* r) {
  const Reader& b = *base;
  const Delta& dl = *delta;
  const uint32_t n = r->node_count_, m = r->edge_count_;
  const uint32_t nb = b.node_count(), nd = dl.node_count();
  // Flat node maps: one walk of the base positions, delta nodes at their gaps.
  node_ref.clear();
  node_ref.reserve(n);
  base_to_merged.assign(nb, kNoNode);
  delta_to_merged.assign(nd, kNoNode);
  {
    uint32_t d = 0;
    for (uint32_t p = 0; p <= nb; ++p) {
      for (; d < nd && dl.gap(d) <= p; ++d) {
        delta_to_merged[d] = static_cast<uint32_t>(node_ref.size());
        node_ref.push_back(kDeltaNode | d);
      }
      if (p < nb && BaseKept(p)) {
        base_to_merged[p] = static_cast<uint32_t>(node_ref.size());
        node_ref.push_back(p);
      }
    }
    if (node_ref.size() != n) return Corrupt("node count differs from the totals");
    for (const auto& [slot, x] : replaced) base_to_merged[slot] = delta_to_merged[x];
  }
  edges.resize(size_t{m} * EdgeEntry::kEncodedLength);
  edge_ref.resize(m);
  out_off.resize((size_t{n} + 1) * 4);
  base_edge_to_merged.assign(b.edge_count(), kNoNode);
  delta_edge_to_merged.assign(dl.edge_count(), kNoNode);

  uint32_t j = 0, k = 0;
  const uint32_t lists = dl.out_list_count();
  auto put = [&](uint32_t source, uint32_t target, RelationId rel, float weight) {
    char* e = edges.data() + size_t{j} * EdgeEntry::kEncodedLength;
    EncodeFixed32(e + EdgeEntry::kSourceOffset, source);
    EncodeFixed32(e + EdgeEntry::kTargetOffset, target);
    e[EdgeEntry::kRelOffset] = static_cast<char>(rel);
    EncodeFloat(e + EdgeEntry::kWeightOffset, weight);
  };
  for (uint32_t i = 0; i < n; ++i) {
    EncodeFixed32(out_off.data() + 4 * size_t{i}, j);
    uint32_t list_source = k < lists ? MapRef(dl.out_source(k)) : kNoNode;
    if (k < lists && (list_source == kNoNode || list_source < i)) {
      return Corrupt("out-lists are not in node order");
    }
    if (list_source == i) {
      for (uint32_t x = dl.out_begin(k); x < dl.out_begin(k + 1); ++x, ++j) {
        if (j >= m) return Corrupt("more edges than the totals say");
        DeltaEdge e = dl.edge(x);
        uint32_t target = MapRef(e.target);
        if (target == kNoNode) return Corrupt("a delta edge has no target");
        put(i, target, e.rel, e.weight);
        edge_ref[j] = kDeltaNode | x;
        delta_edge_to_merged[x] = j;
        if (e.base_edge != kNoNode && e.base_edge < base_edge_to_merged.size()) {
          base_edge_to_merged[e.base_edge] = j;
        }
      }
      ++k;
      continue;
    }
    // No list in the delta: the base's range of the node (or of the slot it took).
    uint32_t ref = node_ref[i];
    uint32_t slot = IsDeltaRef(ref) ? dl.base_slot(ref & ~kDeltaNode) : ref;
    if (slot == kNoNode) continue;  // a new node without out-edges
    for (uint32_t e = b.out_begin(slot); e < b.out_end(slot); ++e, ++j) {
      if (j >= m) return Corrupt("more edges than the totals say");
      uint32_t target = base_to_merged[b.edge_target(e)];
      if (target == kNoNode) return Corrupt("an unchanged base edge points at a removed node");
      put(i, target, dl.merged_relation(b.edge_rel(e)), b.edge_weight(e));
      edge_ref[j] = e;
      base_edge_to_merged[e] = j;
    }
  }
  if (k != lists || j != m) return Corrupt("edge count differs from the totals");
  EncodeFixed32(out_off.data() + 4 * size_t{n}, j);
  r->edges_ = edges.data();
  r->out_off_ = out_off.data();
  flat_ref.store(node_ref.data(), std::memory_order_release);
  return Status::OK();
}

Status Reader::Layer::BuildIn(Reader* r) {
  // In-lists: the delta's where it has one, else the base's, remapped.
  const Reader& b = *base;
  const Delta& dl = *delta;
  const uint32_t n = r->node_count_, m = r->edge_count_;
  uint32_t k = 0;
  in_off.resize((size_t{n} + 1) * 4);
  in_list.resize(size_t{m} * 4);
  uint32_t p = 0;
  const uint32_t in_lists = dl.in_list_count();
  // Each entry an edge into node i, in (rel, source) order, each edge once: with p
  // == m at the end the in-lists hold every edge exactly once.
  uint32_t list_begin = 0, node = 0;
  auto put_in = [&](uint32_t edge) -> Status {
    if (edge >= m || p >= m) return Corrupt("an in-list entry names no edge");
    const char* e = edges.data() + size_t{edge} * EdgeEntry::kEncodedLength;
    if (DecodeFixed32(e + EdgeEntry::kTargetOffset) != node) {
      return Corrupt("an in-list entry is no edge into its node");
    }
    if (p > list_begin) {
      const char* prev = edges.data() + size_t{DecodeFixed32(in_list.data() + 4 * size_t{p - 1})} *
                                            EdgeEntry::kEncodedLength;
      auto order = [](const char* x) {
        return std::pair(static_cast<uint8_t>(x[EdgeEntry::kRelOffset]),
                         DecodeFixed32(x + EdgeEntry::kSourceOffset));
      };
      if (!(order(prev) < order(e))) return Corrupt("an in-list is out of (rel, source) order");
    }
    EncodeFixed32(in_list.data() + 4 * size_t{p++}, edge);
    return Status::OK();
  };
  for (uint32_t i = 0; i < n; ++i) {
    EncodeFixed32(in_off.data() + 4 * size_t{i}, p);
    list_begin = p;
    node = i;
    uint32_t list_target = k < in_lists ? MapRef(dl.in_target(k)) : kNoNode;
    if (k < in_lists && (list_target == kNoNode || list_target < i)) {
      return Corrupt("in-lists are not in node order");
    }
    if (list_target == i) {
      for (uint32_t q = dl.in_begin(k); q < dl.in_begin(k + 1); ++q) {
        uint32_t ref = dl.in_entry(q);
        uint32_t edge;
        if (IsDeltaRef(ref)) {
          uint32_t x = ref & ~kDeltaNode;
          edge = x < delta_edge_to_merged.size() ? delta_edge_to_merged[x] : kNoNode;
        } else {
          edge = ref < base_edge_to_merged.size() ? base_edge_to_merged[ref] : kNoNode;
        }
        AMEM_RETURN_IF_ERROR(put_in(edge));
      }
      ++k;
      continue;
    }
    uint32_t ref = node_ref[i];
    uint32_t slot = IsDeltaRef(ref) ? dl.base_slot(ref & ~kDeltaNode) : ref;
    if (slot == kNoNode) continue;
    for (uint32_t q = b.in_begin(slot); q < b.in_end(slot); ++q) {
      const uint32_t e = b.in_edge(q);
      AMEM_RETURN_IF_ERROR(put_in(e < base_edge_to_merged.size() ? base_edge_to_merged[e] : kNoNode));
    }
  }
  if (k != in_lists || p != m) return Corrupt("in-lists do not hold every edge once");
  EncodeFixed32(in_off.data() + 4 * size_t{n}, p);

  r->in_off_ = in_off.data();
  r->in_list_ = in_list.data();
  FreeVector(&base_edge_to_merged);
  FreeVector(&delta_edge_to_merged);
  return Status::OK();
}

Status Reader::Layer::BuildTime(Reader* r) {
  // Both files' time indexes are sorted by (created_ts, node) and the merged
  // numbering keeps each file's order, so one merge gives the full export's.
  const Reader& b = *base;
  const Reader& d = dn();
  const uint32_t n = r->node_count_;
  time.resize(size_t{n} * kTimeEntryLength);
  uint32_t kb = 0, kd = 0, out = 0;
  auto next_base = [&]() -> std::optional<TimeEntry> {
    for (; kb < b.time_entry_count(); ++kb) {
      TimeEntry e = b.time_entry(kb);
      if (BaseKept(e.node)) return TimeEntry{e.ts, OfBase(e.node)};
    }
    return std::nullopt;
  };
  auto next_delta = [&]() -> std::optional<TimeEntry> {
    if (kd >= d.time_entry_count()) return std::nullopt;
    TimeEntry e = d.time_entry(kd);
    return TimeEntry{e.ts, OfDelta(e.node)};
  };
  for (;;) {
    auto eb = next_base();
    auto ed = next_delta();
    if (!eb && !ed) break;
    bool take_base = eb && (!ed || std::tie(eb->ts, eb->node) < std::tie(ed->ts, ed->node));
    const TimeEntry e = take_base ? *eb : *ed;
    if (take_base) ++kb; else ++kd;
    if (out >= n) return Corrupt("time index holds more entries than nodes");
    char* p = time.data() + size_t{out++} * kTimeEntryLength;
    EncodeFixed64(p, static_cast<uint64_t>(e.ts));
    EncodeFixed32(p + 8, e.node);
  }
  if (out != n) return Corrupt("time index misses nodes");
  r->time_ = time.data();
  return Status::OK();
}

Status Reader::Layer::BuildTerms() {
  const Reader& b = *base;
  const Reader& d = dn();
  base_terms = b.term_count();
  delta_term_id.resize(d.term_count());
  for (uint32_t t = 0; t < d.term_count(); ++t) {
    if (auto id = b.FindTerm(d.term(t))) {
      delta_term_id[t] = *id;
    } else {
      delta_term_id[t] = base_terms + static_cast<uint32_t>(new_terms.size());
      new_terms.push_back(t);
    }
  }
  return Status::OK();
}

std::string_view Reader::Layer::Term(uint32_t t) const {
  return t < base_terms ? base->term(t) : dn().term(new_terms[t - base_terms]);
}

std::optional<uint32_t> Reader::Layer::FindTerm(std::string_view t) const {
  if (auto id = base->FindTerm(t)) return id;
  if (auto id = dn().FindTerm(t)) return delta_term_id[*id];
  return std::nullopt;
}

// ---- posting cursors ----

// A view's cursor: a level per layer from the lowest layer that has the term in
// its base up to the view, over the list of the file under that lowest layer (empty
// when the term is new there). Each level holds the current posting of its
// numbering: the next kept posting from below (renumbered by the walker) or the
// delta's next posting (renumbered by OfDelta), whichever comes first. Both are in
// ascending node order, and a merged position is either a base or a delta one, so
// the two never tie.
struct PostingCursor::Stack {
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Head {  // a level's current posting
    uint32_t node = 0, tf = 0, local = 0;
    const Reader* file = nullptr;  // holds `local`, for its doc length
    bool done = true;
  };
  struct Level {
    Level(const Reader::Layer& l, PostingList d) : layer(l), delta(d), walk(l.nodes) {}
    const Reader::Layer& layer;
    PostingList delta;
    uint32_t y = 0;               // the delta's next posting
    uint32_t delta_node = kNone;  // its merged number
    uint32_t below_node = kNone;  // the merged number of the kept posting below
    size_t delta_block = 0;       // where DeltaRunEnd found the delta's last posting
    bool from_delta = false;      // head is the delta's
    MergedSequence::BaseWalker walk;
    Head head;
  };
  PostingList bottom;  // the lowest level's base list
  uint32_t pos = 0;
  // The list the cursor's window runs over (Sync): the bottom list (-1), or the
  // delta of the level holding the head.
  int window = -1;
  const Reader* bottom_file = nullptr;
  Head bottom_head;
  std::vector<Level> levels;  // lowest first

  const Head& Below(size_t k) const { return k == 0 ? bottom_head : levels[k - 1].head; }
  void LoadBottom() {
    bottom_head.done = pos >= bottom.size();
    if (bottom_head.done) return;
    bottom_head.node = bottom_head.local = bottom.node(pos);
    bottom_head.tf = bottom.tf(pos);
    bottom_head.file = bottom_file;
  }
  void LoadDelta(Level& l) {
    l.delta_node = l.y < l.delta.size() ? l.layer.nodes.OfDelta(l.delta.node(l.y)) : kNone;
  }
  void AdvanceBelow(size_t k) {
    if (k > 0) return Advance(k - 1);
    ++pos;
    LoadBottom();
  }
  // Below's current posting or the first kept one after it, renumbered.
  void MapBelow(size_t k) {
    Level& l = levels[k];
    for (;;) {
      const Head& b = Below(k);
      if (b.done) {
        l.below_node = kNone;
        return;
      }
      const uint32_t m = l.walk.Map(b.node);
      if (m != MergedSequence::BaseWalker::kRemoved) {
        l.below_node = m;
        return;
      }
      AdvanceBelow(k);
    }
  }
  void Pick(size_t k) {
    Level& l = levels[k];
    Head& h = l.head;
    h.done = l.delta_node == kNone && l.below_node == kNone;
    if (h.done) return;
    l.from_delta = l.delta_node < l.below_node;
    if (l.from_delta) {
      h.node = l.delta_node;
      h.tf = l.delta.tf(l.y);
      h.local = l.delta.node(l.y);
      h.file = &l.layer.dn();
    } else {
      const Head& b = Below(k);
      h.node = l.below_node;
      h.tf = b.tf;
      h.local = b.local;
      h.file = b.file;
    }
  }
  // Every level from k up takes the new posting from below.
  void Rise(size_t k = 0) {
    for (; k < levels.size(); ++k) {
      MapBelow(k);
      Pick(k);
    }
  }
  // The cursor left the window at position `at` of its list (Sync): the levels
  // take that posting, as Advance would have given it.
  void Resume(uint32_t at) {
    if (window < 0) {
      pos = at;
      LoadBottom();
      Rise();
      return;
    }
    const size_t k = static_cast<size_t>(window);
    levels[k].y = at;
    LoadDelta(levels[k]);
    Pick(k);
    Rise(k + 1);
  }
  // When every level's head is the bottom's posting at `pos` (Source() is -1): the
  // bottom position below which the following postings of the bottom list are the
  // view's next ones, each renumbered by *off (no level removes one, puts a block
  // between them, or has a delta posting before them); else 0.
  uint32_t Window(uint32_t* off) const {
    if (levels.back().head.done || bottom_head.done) return 0;
    return Window(0, bottom_head.node, INT64_MAX, off);
  }
  // The same from level k's head on up: `at` is its posting's number in the list
  // the window runs over, `limit` that list's bound so far. REQUIRES: each level
  // from k on takes its head from below (k is above Source()).
  uint32_t Window(size_t k, uint32_t at, int64_t limit, uint32_t* off) const {
    for (; k < levels.size(); ++k) {
      const Level& l = levels[k];
      const int64_t below = Below(k).node;
      const int64_t shift = int64_t{l.head.node} - below;  // this level's offset
      int64_t until = l.walk.KeptUntil();
      if (l.delta_node != kNone) until = std::min(until, int64_t{l.delta_node} - shift);
      // In the list's numbering: less the offsets of the levels under this one.
      limit = std::min(limit, until - (below - int64_t{at}));
    }
    *off = levels.back().head.node - at;  // modulo 2^32, as Next adds it
    return limit > int64_t{at} ? static_cast<uint32_t>(std::min<int64_t>(limit, UINT32_MAX)) : 0;
  }
  // The level whose delta holds the head (the highest that takes its own), or -1
  // when it is the bottom list's.
  int Source() const {
    for (size_t k = levels.size(); k-- > 0;) {
      if (levels[k].from_delta) return static_cast<int>(k);
    }
    return -1;
  }
  // When the head is level k's delta posting (k is Source()): the delta position
  // below which the delta's following postings are the view's next ones, each
  // renumbered by *off (they stay in the head's run of the delta,
  // MergedSequence::DeltaRunEnd, which no posting from below comes between, and
  // no level above puts a posting or block between them or removes one); else 0.
  uint32_t DeltaWindow(size_t k, uint32_t* off) {
    Level& l = levels[k];
    if (levels.back().head.done || l.y + 1 >= l.delta.size()) return 0;  // none follows
    const uint32_t at = l.delta.node(l.y);
    const uint32_t end = l.layer.nodes.DeltaRunEnd(at, &l.delta_block);
    if (l.delta.node(l.y + 1) >= end) return 0;  // the next is in another run
    return Window(k + 1, at, end, off);
  }
  void Advance(size_t k) {
    Level& l = levels[k];
    if (l.from_delta) {
      ++l.y;
      LoadDelta(l);
    } else {
      AdvanceBelow(k);
      MapBelow(k);
    }
    Pick(k);
  }
  // Level k to its first posting at `target` or later: the delta's by a binary
  // search, the level below (or the bottom list) to the first base position not
  // before `target`, and the walker on from there.
  void Seek(size_t k, uint32_t target) {
    Level& l = levels[k];
    if (l.head.done || l.head.node >= target) return;
    if (l.delta_node < target) {
      uint32_t lo = l.y + 1, hi = l.delta.size();
      while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (l.layer.nodes.OfDelta(l.delta.node(mid)) < target) lo = mid + 1; else hi = mid;
      }
      l.y = lo;
      LoadDelta(l);
    }
    if (l.below_node < target) {
      const uint32_t b = l.layer.nodes.BaseLowerBound(target);
      if (k > 0) {
        Seek(k - 1, b);
      } else if (!bottom_head.done && bottom_head.node < b) {
        pos = LowerBound(bottom, pos + 1, b);
        LoadBottom();
      }
      MapBelow(k);
    }
    Pick(k);
  }
};

PostingCursor::PostingCursor() = default;
PostingCursor::~PostingCursor() = default;
PostingCursor::PostingCursor(PostingCursor&&) noexcept = default;
PostingCursor& PostingCursor::operator=(PostingCursor&&) noexcept = default;

void PostingCursor::StackNext() {
  Stack& s = *stack_;
  if (done_) return;
  if (limit_ != 0) {
    s.Resume(pos_);  // left the window (pos_ moved on in it)
  } else {
    s.Advance(s.levels.size() - 1);
  }
  Sync();
}

void PostingCursor::StackSeek(uint32_t node) {
  Stack& s = *stack_;
  if (limit_ != 0) s.Resume(pos_);  // the levels to the window's posting first
  s.Seek(s.levels.size() - 1, node);
  Sync();
}

// The window runs over the list holding the head: the bottom list, or (a run of
// postings one level's delta holds, as many new documents in a row are) that
// level's delta.
void PostingCursor::Sync() {
  Stack& s = *stack_;
  const Stack::Head& h = s.levels.back().head;
  done_ = h.done;
  node_ = h.node;
  tf_ = h.tf;
  local_ = h.local;
  file_ = h.file;
  s.window = done_ ? -1 : s.Source();
  if (s.window < 0) {
    list_ = s.bottom;
    pos_ = s.pos;
    limit_ = s.Window(&off_);
  } else {
    const Stack::Level& l = s.levels[static_cast<size_t>(s.window)];
    list_ = l.delta;
    pos_ = l.y;
    limit_ = s.DeltaWindow(static_cast<size_t>(s.window), &off_);
  }
}

std::optional<uint32_t> Reader::Layer::DeltaTerm(uint32_t t) const {
  if (t >= base_terms) return new_terms[t - base_terms];
  return dn().FindTerm(base->term(t));
}

PostingCursor Reader::Layer::Cursor(uint32_t t, Field field, bool sized) const {
  PostingCursor c;
  auto stack = std::make_unique<PostingCursor::Stack>();
  // The layers from this view down, while the term is in the layer's base.
  std::vector<const Layer*> chain;
  const Reader* below = nullptr;
  for (const Layer* l = this;;) {
    chain.push_back(l);
    if (t >= l->base_terms) break;
    below = l->base.get();
    if (!below->layer_) break;
    l = below->layer_;
    below = nullptr;
  }
  if (below != nullptr) {
    stack->bottom = below->postings(t, field);
    stack->bottom_file = below;
  }
  stack->levels.reserve(chain.size());
  for (size_t k = chain.size(); k-- > 0;) {
    const Layer& l = *chain[k];
    const std::optional<uint32_t> dt = l.DeltaTerm(t);
    stack->levels.emplace_back(l, dt ? l.dn().postings(*dt, field) : PostingList());
  }
  stack->LoadBottom();
  for (size_t k = 0; k < stack->levels.size(); ++k) {
    stack->LoadDelta(stack->levels[k]);
    stack->MapBelow(k);
    stack->Pick(k);
  }
  c.list_ = stack->bottom;
  c.stack_ = std::move(stack);
  c.Sync();
  if (sized) c.size_ = Count(t, field);
  return c;
}

uint32_t Reader::Layer::Count(uint32_t t, Field field) const {
  const uint64_t key = 2 * uint64_t{t} + (field == Field::kContent ? 0 : 1);
  {
    std::lock_guard<std::mutex> lock(counts_mu);
    if (auto it = counts.find(key); it != counts.end()) return it->second;
  }
  uint32_t from_base = 0, removed = 0;
  if (t < base_terms) {
    PostingCursor c = base->postings_cursor(t, field);
    from_base = c.size();
    for (const MergedSequence::Range& r : nodes.removed()) {
      c.Seek(r.begin);
      for (; !c.done() && c.node() < r.end; c.Next()) ++removed;
      if (c.done()) break;
    }
  }
  if (removed > from_base) {  // the base's count and its walk disagree
    Fail(Corrupt("postings of term " + std::to_string(t) + " do not fit their count"));
    removed = from_base;
  }
  const std::optional<uint32_t> dt = DeltaTerm(t);
  const uint32_t count = from_base - removed + (dt ? dn().postings(*dt, field).size() : 0);
  std::lock_guard<std::mutex> lock(counts_mu);
  counts.emplace(key, count);
  return count;
}

const Reader::Layer::MergedPostings& Reader::Layer::Postings(uint32_t t) const {
  std::lock_guard<std::mutex> lock(postings_mu);
  auto& slot = postings_cache[t];
  if (slot) return *slot;
  auto merged = std::make_unique<MergedPostings>();
  // Content postings, then meta ones, as a file holds them.
  for (Field field : {Field::kContent, Field::kMeta}) {
    for (PostingCursor c = Cursor(t, field, /*sized=*/false); !c.done(); c.Next()) {
      PutPosting(&merged->bytes, c.node(), c.tf(), field);
      if (field == Field::kContent) ++merged->content;
    }
  }
  slot = std::move(merged);
  return *slot;
}

std::vector<uint32_t> Reader::Layer::NodesOfType(uint8_t type) const {
  std::vector<uint32_t> out;
  for (uint32_t bi : base->NodesOfType(type)) {
    if (BaseKept(bi)) out.push_back(OfBase(bi));
  }
  const size_t from_base = out.size();
  for (uint32_t d : dn().NodesOfType(type)) out.push_back(OfDelta(d));
  std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(from_base), out.end());
  return out;
}

Reader::Layer::EdgeAttrs Reader::Layer::Attrs(uint32_t j) const {
  uint32_t ref;
  if (flat_ref.load(std::memory_order_acquire) != nullptr) {
    ref = edge_ref[j];
  } else {
    MergedSequence::Item it = edge_seq.At(j);
    ref = it.delta ? (kDeltaNode | it.index) : it.index;
  }
  EdgeAttrs a;
  if (IsDeltaRef(ref)) {
    DeltaEdge e = delta->edge(ref & ~kDeltaNode);
    a.payload = e.payload;
    a.run = e.run;
    a.task = e.task;
    a.created_ts = e.created_ts;
    a.updated_ts = e.updated_ts;
  } else {
    a.payload = base->edge_payload(ref);
    a.run = base->edge_run(ref);
    a.task = base->edge_task(ref);
    a.created_ts = base->edge_created_ts(ref);
    a.updated_ts = base->edge_updated_ts(ref);
  }
  return a;
}

KvEntry Reader::Layer::Kv(uint32_t k) const {
  MergedSequence::Item it = kv.At(k);
  if (!it.delta) return base->kv(it.index);
  const DeltaKvEntry& e = delta->kv(it.index);
  KvEntry out;
  out.scope = e.scope;
  out.ns = e.ns;
  out.key = e.key;
  out.value = e.value;
  out.ts = e.ts;
  out.run = e.run;
  out.task = e.task;
  return out;
}

std::optional<uint32_t> Reader::Layer::FindKv(std::string_view scope, std::string_view ns,
                                              std::string_view key) const {
  const auto want = std::make_tuple(scope, ns, key);
  // The delta's entries are in (scope, ns, key) order (FORMAT.md §11.3, 0x07).
  uint32_t lo = 0, hi = delta->kv_count();
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const DeltaKvEntry& e = delta->kv(mid);
    if (std::make_tuple(e.scope, e.ns, e.key) < want) lo = mid + 1; else hi = mid;
  }
  if (lo < delta->kv_count()) {
    const DeltaKvEntry& e = delta->kv(lo);
    if (std::make_tuple(e.scope, e.ns, e.key) == want) return kv.OfDelta(lo);
  }
  auto bk = base->FindKv(scope, ns, key);
  if (!bk || kv.IsRemoved(*bk)) return std::nullopt;
  return kv.OfBase(*bk);
}

const char* Reader::LayeredNodePtr(uint32_t i) const {
  auto [file, x] = layer_->Local(i);
  return file->node_ptr(x);
}

Edge Reader::LayeredEdge(uint32_t j) const {
  if (NestedRead::depth == 0 && layer_->NotePointUse()) {
    BuildLazy(kLazyOut);
    return edge(j);
  }
  NestedRead nested;
  return layer_->PointEdge(j);
}

uint32_t Reader::LayeredList(ListPart part, uint32_t x) const {
  if (NestedRead::depth == 0 && layer_->NotePointUse()) {
    const bool out = part == ListPart::kOutBegin || part == ListPart::kOutEnd;
    BuildLazy(out ? kLazyOut : static_cast<uint8_t>(kLazyOut | kLazyIn));
    switch (part) {
      case ListPart::kOutBegin: return out_begin(x);
      case ListPart::kOutEnd: return out_end(x);
      case ListPart::kInBegin: return in_begin(x);
      case ListPart::kInEnd: return in_end(x);
      case ListPart::kInEdge: return in_edge(x);
    }
  }
  NestedRead nested;
  return layer_->PointList(part, x);
}

uint32_t Reader::LayeredDocLength(uint32_t i) const {
  auto [file, x] = layer_->Local(i);
  return file->doc_length(x);
}

void Reader::BuildLazy(uint8_t what) const {
  NestedRead nested;
  auto* layer = const_cast<Layer*>(layer_);
  std::lock_guard<std::mutex> lock(layer->build_mu);
  // The delta was checked against the base when it was opened (Delta::CheckFit); a
  // failure here means the base's own tables are damaged, which Open did not walk.
  Reader* self = const_cast<Reader*>(this);
  // In-lists are made from the out tables' edge numbering: those come first.
  for (uint8_t part : {kLazyOut, kLazyIn, kLazyTime}) {
    if ((what & part) == 0 || (lazy_pending_.load(std::memory_order_acquire) & part) == 0) continue;
    Status s = part == kLazyOut  ? layer->BuildOut(self)
               : part == kLazyIn ? layer->BuildIn(self)
                                 : layer->BuildTime(self);
    if (!s.ok()) {
      // Sticky: ContentStatus() reports it; every table still pending gets one that
      // keeps the accessors in range, so the query ends and its caller drops it.
      layer->Fail(s);
      const uint8_t rest = lazy_pending_.load(std::memory_order_acquire);
      layer->UseFallback(self, rest);
      lazy_pending_.fetch_and(static_cast<uint8_t>(~rest), std::memory_order_release);
      return;
    }
    lazy_pending_.fetch_and(static_cast<uint8_t>(~part), std::memory_order_release);
  }
}

void Reader::Layer::UseFallback(Reader* r, uint8_t parts) {
  const uint32_t n = r->node_count_, m = r->edge_count_;  // m > 0 only with n > 0 (Build)
  if (parts & kLazyOut) {
    edges.assign(size_t{m} * EdgeEntry::kEncodedLength, '\0');
    out_off.assign((size_t{n} + 1) * 4, '\0');
    r->edges_ = edges.data();
    r->out_off_ = out_off.data();
  }
  if (parts & kLazyIn) {
    in_off.assign((size_t{n} + 1) * 4, '\0');
    in_list.assign(size_t{m} * 4, '\0');
    r->in_off_ = in_off.data();
    r->in_list_ = in_list.data();
  }
  if (parts & kLazyTime) {
    time.assign(size_t{n} * kTimeEntryLength, '\0');
    for (uint32_t i = 0; i < n; ++i) EncodeFixed32(time.data() + size_t{i} * kTimeEntryLength + 8, i);
    r->time_ = time.data();
  }
}

uint32_t Reader::LayeredSession(uint32_t i) const {
  auto [file, x] = layer_->Local(i);
  return layer_->MergedSession(file, file->session(x));
}

uint32_t Reader::Layer::MergedSession(const Reader* file, uint32_t s) const {
  if (file != base.get()) return delta_session[s];
  if (session_seq.IsRemoved(s)) {
    Fail(Corrupt("a kept base node's session is not among the runs"));
    return 0;
  }
  return session_seq.OfBase(s);
}

uint32_t Reader::Layer::FindMergedSession(std::string_view run) const {
  const Reader& b = *base;
  const std::optional<uint32_t> at = b.SessionLowerBound(run);
  if (!at) return kNoNode;
  if (*at < b.session_count() && b.session_run(*at) == run) {
    return session_seq.IsRemoved(*at) ? kNoNode : session_seq.OfBase(*at);
  }
  const auto runs = delta->new_runs();
  const auto it = std::lower_bound(runs.begin(), runs.end(), run);
  if (it == runs.end() || *it != run) return kNoNode;
  return session_seq.OfDelta(static_cast<uint32_t>(it - runs.begin()));
}

std::string_view Reader::Layer::SessionRun(uint32_t s) const {
  const MergedSequence::Item it = session_seq.At(s);
  return it.delta ? delta->new_runs()[it.index] : base->session_run(it.index);
}

uint32_t Reader::Layer::SessionBegin(uint32_t s) const {
  const Reader& b = *base;
  const uint32_t nb = b.node_count();
  // Base nodes below the first base session whose run is not below s's: the
  // base's own session (a kept run), or the one a new run goes before.
  uint32_t below = nb;
  if (s < session_seq.size()) {
    const MergedSequence::Item it = session_seq.At(s);
    const uint32_t first = it.delta ? delta->new_run_gaps()[it.index] : it.index;
    if (first < b.session_count()) below = b.session_range(first).begin;
  }
  if (below > nb) {
    Fail(Corrupt("a base session's range is out of bounds"));
    below = nb;
  }
  // Delta nodes of runs below s's: the delta file's sessions are in run order.
  const auto d = std::lower_bound(delta_session.begin(), delta_session.end(), s);
  const uint32_t t = static_cast<uint32_t>(d - delta_session.begin());
  const uint32_t delta_below =
      t < dn().session_count() ? dn().session_range(t).begin : dn().node_count();
  return nodes.KeptIn(0, below) + delta_below;
}

SessionRange Reader::Layer::Session(uint32_t s) const {
  const uint32_t begin = SessionBegin(s), end = SessionBegin(s + 1);
  if (end < begin) {  // a damaged base session index
    Fail(Corrupt("session ranges out of order"));
    return {s, begin, begin};
  }
  return {s, begin, end};
}

}  // namespace amem::snapshot
