// Base + delta read as one graph (docs/FORMAT.md §11.5). Build() walks the base's
// fixed-size arrays once in merged order; everything else is looked up on use.
#include "snapshot/layered.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "common/coding.h"

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
  if (base->layered()) return Status::InvalidArgument("OpenLayered: the base is itself layered");
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
  if (delta->runs().size() != t.session_count) return Corrupt("runs and session count differ");
  AMEM_RETURN_IF_ERROR(BuildNodes(r));
  AMEM_RETURN_IF_ERROR(BuildEdges(r));
  AMEM_RETURN_IF_ERROR(BuildTime(r));
  AMEM_RETURN_IF_ERROR(BuildTerms());
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
  std::vector<bool> gone(nb, false);
  for (uint32_t x : dl.removed()) {
    if (x >= nb) return Corrupt("removed node out of range");
    gone[x] = true;
  }
  for (uint32_t d = 0; d < nd; ++d) {
    uint32_t slot = dl.base_slot(d);
    if (slot != kNoNode) {
      if (slot >= nb) return Corrupt("replaced node out of range");
      gone[slot] = true;
    }
  }
  // Merged order: at base position p, the delta nodes that go before it, then p.
  node_ref.reserve(r->node_count_);
  base_to_merged.assign(nb, kNoNode);
  delta_to_merged.assign(nd, kNoNode);
  uint32_t d = 0;
  for (uint32_t p = 0; p <= nb; ++p) {
    for (; d < nd && dl.gap(d) <= p; ++d) {
      delta_to_merged[d] = static_cast<uint32_t>(node_ref.size());
      node_ref.push_back(kDeltaNode | d);
    }
    if (p < nb && !gone[p]) {
      base_to_merged[p] = static_cast<uint32_t>(node_ref.size());
      node_ref.push_back(p);
    }
  }
  if (d != nd || node_ref.size() != r->node_count_) return Corrupt("node count differs from the totals");
  for (uint32_t x = 0; x < nd; ++x) {
    if (dl.base_slot(x) != kNoNode) base_to_merged[dl.base_slot(x)] = delta_to_merged[x];
  }

  // Sessions: each file's run numbers to the runs at H.
  const auto& runs = dl.runs();
  auto merged_session = [&](std::string_view run) -> uint32_t {
    auto it = std::lower_bound(runs.begin(), runs.end(), run);
    return it != runs.end() && *it == run ? static_cast<uint32_t>(it - runs.begin()) : kNoNode;
  };
  base_session.resize(b.session_count());
  for (uint32_t s = 0; s < b.session_count(); ++s) base_session[s] = merged_session(b.session_run(s));
  delta_session.resize(dn().session_count());
  for (uint32_t s = 0; s < dn().session_count(); ++s) {
    delta_session[s] = merged_session(dn().session_run(s));
    if (delta_session[s] == kNoNode) return Corrupt("a delta node's run is not among the runs");
  }

  // One pass in merged order: sessions, document lengths, whether any vector.
  const uint32_t n = r->node_count_;
  const uint32_t sessions_at_h = r->session_count_;
  std::vector<uint32_t> start(static_cast<size_t>(sessions_at_h) + 1, 0);
  doc_lengths.resize(size_t{n} * 4);
  bool any_vector = false;
  uint32_t last_session = 0;
  for (uint32_t i = 0; i < n; ++i) {
    auto [file, x] = Local(i);
    const uint32_t s = file == base.get() ? base_session[file->session(x)]
                                          : delta_session[file->session(x)];
    if (s == kNoNode || s < last_session) return Corrupt("nodes are not in run order");
    last_session = s;
    ++start[s + 1];
    EncodeFixed32(doc_lengths.data() + 4 * size_t{i}, file->doc_length(x));
    if (!any_vector && file->vector(x) != nullptr) any_vector = true;
  }
  for (uint32_t s = 0; s < sessions_at_h; ++s) start[s + 1] += start[s];
  sessions.resize(size_t{sessions_at_h} * kSessionEntryLength);
  for (uint32_t s = 0; s < sessions_at_h; ++s) {
    char* e = sessions.data() + size_t{s} * kSessionEntryLength;
    EncodeFixed32(e, s);
    EncodeFixed32(e + 4, start[s]);
    EncodeFixed32(e + 8, start[s + 1]);
  }
  r->UseLayerSessions(sessions.data());
  r->doc_lengths_ = b.has_doc_lengths() ? doc_lengths.data() : nullptr;
  r->flags_ = static_cast<uint16_t>((b.flags_ & ~kFlagHasVectors) | (any_vector ? kFlagHasVectors : 0));
  return Status::OK();
}

Status Reader::Layer::BuildEdges(Reader* r) {
  const Reader& b = *base;
  const Delta& dl = *delta;
  const uint32_t n = r->node_count_, m = r->edge_count_;
  edges.resize(size_t{m} * EdgeEntry::kEncodedLength);
  edge_ref.resize(m);
  out_off.resize((size_t{n} + 1) * 4);
  std::vector<uint32_t> base_edge_to_merged(b.edge_count(), kNoNode);
  std::vector<uint32_t> delta_edge_to_merged(dl.edge_count(), kNoNode);

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

  // In-lists: the delta's where it has one, else the base's, remapped.
  in_off.resize((size_t{n} + 1) * 4);
  in_list.resize(size_t{m} * 4);
  uint32_t p = 0;
  k = 0;
  const uint32_t in_lists = dl.in_list_count();
  auto put_in = [&](uint32_t edge) -> Status {
    if (edge == kNoNode || p >= m) return Corrupt("an in-list entry names no edge");
    EncodeFixed32(in_list.data() + 4 * size_t{p++}, edge);
    return Status::OK();
  };
  for (uint32_t i = 0; i < n; ++i) {
    EncodeFixed32(in_off.data() + 4 * size_t{i}, p);
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
      AMEM_RETURN_IF_ERROR(put_in(base_edge_to_merged[b.in_edge(q)]));
    }
  }
  if (k != in_lists || p != m) return Corrupt("in-lists do not hold every edge once");
  EncodeFixed32(in_off.data() + 4 * size_t{n}, p);

  r->edges_ = edges.data();
  r->out_off_ = out_off.data();
  r->in_off_ = in_off.data();
  r->in_list_ = in_list.data();
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
      uint32_t m = base_to_merged[e.node];
      if (m != kNoNode && node_ref[m] == e.node) return TimeEntry{e.ts, m};
    }
    return std::nullopt;
  };
  auto next_delta = [&]() -> std::optional<TimeEntry> {
    if (kd >= d.time_entry_count()) return std::nullopt;
    TimeEntry e = d.time_entry(kd);
    return TimeEntry{e.ts, delta_to_merged[e.node]};
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
  r->time_count_ = n;
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

const Reader::Layer::MergedPostings& Reader::Layer::Postings(uint32_t t) const {
  std::lock_guard<std::mutex> lock(postings_mu);
  auto& slot = postings_cache[t];
  if (slot) return *slot;
  auto merged = std::make_unique<MergedPostings>();
  PostingList from_base = t < base_terms ? base->postings(t) : PostingList();
  std::optional<uint32_t> dt =
      t < base_terms ? dn().FindTerm(base->term(t)) : std::optional<uint32_t>(new_terms[t - base_terms]);
  PostingList from_delta = dt ? dn().postings(*dt) : PostingList();
  // Both lists are sorted by (field, node) in their own numbering, which the
  // merged numbering preserves; base nodes that are gone or replaced drop out.
  uint32_t x = 0, y = 0;
  auto base_next = [&]() -> std::optional<Posting> {
    for (; x < from_base.size(); ++x) {
      Posting p = from_base[x];
      uint32_t m = base_to_merged[p.node];
      if (m != kNoNode && node_ref[m] == p.node) return Posting{m, p.tf, p.field};
    }
    return std::nullopt;
  };
  auto delta_next = [&]() -> std::optional<Posting> {
    if (y >= from_delta.size()) return std::nullopt;
    Posting p = from_delta[y];
    return Posting{delta_to_merged[p.node], p.tf, p.field};
  };
  for (;;) {
    auto pb = base_next();
    auto pd = delta_next();
    if (!pb && !pd) break;
    bool take_base = pb && (!pd || std::make_pair(static_cast<uint32_t>(pb->field), pb->node) <
                                       std::make_pair(static_cast<uint32_t>(pd->field), pd->node));
    const Posting p = take_base ? *pb : *pd;
    if (take_base) ++x; else ++y;
    if (p.field == Field::kContent) ++merged->content;
    PutPosting(&merged->bytes, p.node, p.tf, p.field);
  }
  slot = std::move(merged);
  return *slot;
}

std::vector<uint32_t> Reader::Layer::NodesOfType(uint8_t type) const {
  std::vector<uint32_t> out;
  for (uint32_t bi : base->NodesOfType(type)) {
    uint32_t m = base_to_merged[bi];
    if (m != kNoNode && node_ref[m] == bi) out.push_back(m);
  }
  const size_t from_base = out.size();
  for (uint32_t d : dn().NodesOfType(type)) out.push_back(delta_to_merged[d]);
  std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(from_base), out.end());
  return out;
}

Reader::Layer::EdgeAttrs Reader::Layer::Attrs(uint32_t j) const {
  const uint32_t ref = edge_ref[j];
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
  for (uint32_t k = 0; k < delta->kv_count(); ++k) {
    const DeltaKvEntry& e = delta->kv(k);
    if (std::make_tuple(e.scope, e.ns, e.key) == want) return kv.OfDelta(k);
  }
  auto bk = base->FindKv(scope, ns, key);
  if (!bk || kv.IsRemoved(*bk)) return std::nullopt;
  return kv.OfBase(*bk);
}

const char* Reader::LayeredNodePtr(uint32_t i) const {
  auto [file, x] = layer_->Local(i);
  return file->node_ptr(x);
}

uint32_t Reader::LayeredSession(uint32_t i) const {
  auto [file, x] = layer_->Local(i);
  const uint32_t s = file->session(x);
  return file == layer_->base.get() ? layer_->base_session[s] : layer_->delta_session[s];
}

}  // namespace amem::snapshot
