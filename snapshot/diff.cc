#include "snapshot/diff.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace amem::snapshot {

namespace {

std::string NodeName(const Reader& r, uint32_t i) {
  std::string_view k = r.key(i);
  return r.has_extensions() ? std::string(k) : "#" + std::to_string(i);
}

std::map<std::string, uint32_t> NodesByKey(const Reader& r) {
  std::map<std::string, uint32_t> out;
  for (uint32_t i = 0; i < r.node_count(); ++i) out.emplace(NodeName(r, i), i);
  return out;
}

std::map<std::string, uint32_t> EdgesByKey(const Reader& r) {
  std::map<std::string, uint32_t> out;
  for (uint32_t j = 0; j < r.edge_count(); ++j) {
    out.emplace(NodeName(r, r.edge_source(j)) + " -" + std::string(r.relation_name(r.edge_rel(j))) +
                    "-> " + NodeName(r, r.edge_target(j)),
                j);
  }
  return out;
}

std::map<std::string, uint32_t> KvByKey(const Reader& r) {
  std::map<std::string, uint32_t> out;
  for (uint32_t k = 0; k < r.kv_count(); ++k) {
    KvEntry e = r.kv(k);
    out.emplace(std::string(e.scope) + "/" + std::string(e.ns) + "/" + std::string(e.key), k);
  }
  return out;
}

std::vector<std::string> NodeFieldsDiffer(const Reader& a, uint32_t i, const Reader& b, uint32_t k) {
  std::vector<std::string> f;
  auto cmp = [&](const char* name, auto x, auto y) {
    if (!(x == y)) f.push_back(name);
  };
  cmp("type", a.type_code(i), b.type_code(k));
  cmp("content", a.content(i), b.content(k));
  cmp("meta", a.meta(i), b.meta(k));
  cmp("confidence", a.confidence(i), b.confidence(k));
  cmp("created_ts", a.created_ts(i), b.created_ts(k));
  cmp("updated_ts", a.updated_ts(i), b.updated_ts(k));
  cmp("scope", a.scope(i), b.scope(k));
  cmp("run", a.run(i), b.run(k));
  cmp("task", a.task(i), b.task(k));
  cmp("stub", a.is_stub(i), b.is_stub(k));
  const float* va = a.vector(i);
  const float* vb = b.vector(k);
  bool same_vec = (va == nullptr) == (vb == nullptr) &&
                  (va == nullptr || (a.dimension() == b.dimension() &&
                                     std::equal(va, va + a.dimension(), vb)));
  if (!same_vec) f.push_back("vector");
  return f;
}

std::vector<std::string> EdgeFieldsDiffer(const Reader& a, uint32_t i, const Reader& b, uint32_t k) {
  std::vector<std::string> f;
  auto cmp = [&](const char* name, auto x, auto y) {
    if (!(x == y)) f.push_back(name);
  };
  cmp("weight", a.edge_weight(i), b.edge_weight(k));
  cmp("payload", a.edge_payload(i), b.edge_payload(k));
  cmp("created_ts", a.edge_created_ts(i), b.edge_created_ts(k));
  cmp("updated_ts", a.edge_updated_ts(i), b.edge_updated_ts(k));
  cmp("run", a.edge_run(i), b.edge_run(k));
  cmp("task", a.edge_task(i), b.edge_task(k));
  return f;
}

std::vector<std::string> KvFieldsDiffer(const Reader& a, uint32_t i, const Reader& b, uint32_t k) {
  KvEntry x = a.kv(i), y = b.kv(k);
  std::vector<std::string> f;
  if (x.value != y.value) f.push_back("value");
  if (x.ts != y.ts) f.push_back("ts");
  if (x.run != y.run) f.push_back("run");
  if (x.task != y.task) f.push_back("task");
  return f;
}

template <typename FieldsFn>
void DiffMaps(const std::map<std::string, uint32_t>& ma, const std::map<std::string, uint32_t>& mb,
              FieldsFn&& fields, std::vector<DiffEntry>* added, std::vector<DiffEntry>* removed,
              std::vector<DiffEntry>* changed) {
  for (const auto& [key, i] : ma) {
    auto it = mb.find(key);
    if (it == mb.end()) {
      removed->push_back({key, {}});
    } else if (auto f = fields(i, it->second); !f.empty()) {
      changed->push_back({key, std::move(f)});
    }
  }
  for (const auto& [key, k] : mb) {
    if (!ma.count(key)) added->push_back({key, {}});
  }
}

}  // namespace

bool DiffResult::equal() const {
  return !header_changed && nodes_added.empty() && nodes_removed.empty() &&
         nodes_changed.empty() && edges_added.empty() && edges_removed.empty() &&
         edges_changed.empty() && kv_added.empty() && kv_removed.empty() && kv_changed.empty();
}

DiffResult DiffSnapshots(const Reader& a, const Reader& b) {
  DiffResult d;
  d.header_changed = a.dimension() != b.dimension();
  DiffMaps(
      NodesByKey(a), NodesByKey(b),
      [&](uint32_t i, uint32_t k) { return NodeFieldsDiffer(a, i, b, k); }, &d.nodes_added,
      &d.nodes_removed, &d.nodes_changed);
  DiffMaps(
      EdgesByKey(a), EdgesByKey(b),
      [&](uint32_t i, uint32_t k) { return EdgeFieldsDiffer(a, i, b, k); }, &d.edges_added,
      &d.edges_removed, &d.edges_changed);
  DiffMaps(
      KvByKey(a), KvByKey(b), [&](uint32_t i, uint32_t k) { return KvFieldsDiffer(a, i, b, k); },
      &d.kv_added, &d.kv_removed, &d.kv_changed);
  return d;
}

std::string DiffToJson(const DiffResult& d) {
  using nlohmann::json;
  auto keys = [](const std::vector<DiffEntry>& v) {
    json a = json::array();
    for (const DiffEntry& e : v) a.push_back(e.key);
    return a;
  };
  auto changed = [](const std::vector<DiffEntry>& v) {
    json a = json::array();
    for (const DiffEntry& e : v) a.push_back({{"key", e.key}, {"fields", e.fields}});
    return a;
  };
  json j;
  j["equal"] = d.equal();
  j["dimension_changed"] = d.header_changed;
  j["nodes"] = {{"added", keys(d.nodes_added)}, {"removed", keys(d.nodes_removed)},
                {"changed", changed(d.nodes_changed)}};
  j["edges"] = {{"added", keys(d.edges_added)}, {"removed", keys(d.edges_removed)},
                {"changed", changed(d.edges_changed)}};
  j["kv"] = {{"added", keys(d.kv_added)}, {"removed", keys(d.kv_removed)},
             {"changed", changed(d.kv_changed)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string DiffToText(const DiffResult& d) {
  std::string out;
  if (d.header_changed) out += "~ dimension\n";
  auto list = [&](char mark, const char* what, const std::vector<DiffEntry>& v) {
    for (const DiffEntry& e : v) {
      out += mark;
      out += ' ';
      out += what;
      out += ' ';
      out += e.key;
      for (size_t k = 0; k < e.fields.size(); ++k) out += (k ? ", " : ": ") + e.fields[k];
      out += '\n';
    }
  };
  list('+', "node", d.nodes_added);
  list('-', "node", d.nodes_removed);
  list('~', "node", d.nodes_changed);
  list('+', "edge", d.edges_added);
  list('-', "edge", d.edges_removed);
  list('~', "edge", d.edges_changed);
  list('+', "kv", d.kv_added);
  list('-', "kv", d.kv_removed);
  list('~', "kv", d.kv_changed);
  return out;
}

}  // namespace amem::snapshot
