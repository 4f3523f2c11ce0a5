#include "snapshot/info.h"

#include <nlohmann/json.hpp>

#include "common/model.h"

namespace amem::snapshot {

InfoResult SnapshotInfo(const Reader& r) {
  InfoResult out;
  out.version = r.version();
  out.flags = r.flags();
  out.features = r.features();
  out.file_size = r.file_size();
  out.nodes = r.node_count();
  out.edges = r.edge_count();
  out.stubs = r.stub_count();
  out.kv = r.kv_count();
  out.terms = r.term_count();
  out.dimension = r.dimension();
  out.sessions = r.session_count();
  out.has_vectors = r.has_vectors();
  out.has_term_index = r.has_term_index();
  out.has_doc_lengths = r.has_doc_lengths();
  out.has_extensions = r.has_extensions();
  out.has_checksum = r.has_checksum();
  out.has_entity_search = r.has_entity_search();
  out.search_entities = r.search_entity_count();
  if (auto odd = r.search_odd_labels()) out.search_odd_labels = static_cast<uint32_t>(odd->size());
  out.content_compressed = r.content_compressed();
  out.index_ignored = r.index_section_ignored();
  out.content_bytes = r.content_compressed_size();
  out.content_uncompressed = r.content_uncompressed_size();
  out.newest_ts = r.newest_timestamp();
  out.type_counts.assign(kNodeTypeCount, 0);
  for (uint32_t i = 0; i < r.node_count(); ++i) ++out.type_counts[r.type_code(i)];
  std::vector<uint32_t> per_session(r.session_count(), 0);
  for (uint32_t i = 0; i < r.node_count(); ++i) ++per_session[r.session(i)];
  for (uint32_t s = 0; s < r.session_count(); ++s) {
    out.session_list.push_back({std::string(r.session_run(s)), per_session[s]});
  }
  for (const BlockInfo& b : r.blocks()) {
    out.blocks.push_back({b.tag, BlockName(b.tag), b.offset, b.length});
  }
  return out;
}

Result<InfoResult> SnapshotInfo(const std::string& path) {
  auto r = Reader::Open(path);
  if (!r.ok()) return r.status();
  return SnapshotInfo(**r);
}

std::string InfoToJson(const InfoResult& in) {
  using nlohmann::json;
  json j;
  j["version"] = in.version;
  j["flags"] = in.flags;
  j["features"] = in.features;
  j["file_size"] = in.file_size;
  j["nodes"] = in.nodes;
  j["edges"] = in.edges;
  j["stubs"] = in.stubs;
  j["kv"] = in.kv;
  j["terms"] = in.terms;
  j["dimension"] = in.dimension;
  j["sessions"] = in.sessions;
  j["has_vectors"] = in.has_vectors;
  j["has_term_index"] = in.has_term_index;
  j["has_doc_lengths"] = in.has_doc_lengths;
  j["has_extensions"] = in.has_extensions;
  j["has_checksum"] = in.has_checksum;
  j["has_entity_search"] = in.has_entity_search;
  j["search_entities"] = in.search_entities;
  j["search_odd_labels"] = in.search_odd_labels ? nlohmann::json(*in.search_odd_labels) : nlohmann::json();
  j["content_compressed"] = in.content_compressed;
  j["index_ignored"] = in.index_ignored;
  j["content_bytes"] = in.content_bytes;
  j["content_uncompressed"] = in.content_uncompressed;
  j["newest_ts"] = in.newest_ts;
  json types = json::object();
  for (size_t t = 0; t < in.type_counts.size(); ++t) {
    types[NodeTypeName(static_cast<NodeType>(t))] = in.type_counts[t];
  }
  j["types"] = types;
  json sessions = json::array();
  for (const auto& s : in.session_list) sessions.push_back({{"run", s.run}, {"nodes", s.nodes}});
  j["session_list"] = sessions;
  json blocks = json::array();
  for (const auto& b : in.blocks) {
    blocks.push_back({{"tag", b.tag}, {"name", b.name}, {"offset", b.offset}, {"length", b.length}});
  }
  j["blocks"] = blocks;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string InfoToText(const InfoResult& in) {
  std::string out;
  auto line = [&](const std::string& k, const std::string& v) { out += k + ": " + v + "\n"; };
  auto yes = [](bool b) { return std::string(b ? "yes" : "no"); };
  line("version", std::to_string(in.version));
  line("file size", std::to_string(in.file_size) + " bytes");
  line("nodes", std::to_string(in.nodes) + " (" + std::to_string(in.stubs) + " stubs)");
  line("edges", std::to_string(in.edges));
  line("kv entries", std::to_string(in.kv));
  line("dimension", std::to_string(in.dimension));
  line("sessions", std::to_string(in.sessions));
  line("vectors", yes(in.has_vectors));
  line("term index", yes(in.has_term_index) + " (" + std::to_string(in.terms) + " terms)");
  line("doc lengths", yes(in.has_doc_lengths));
  line("extensions", yes(in.has_extensions));
  line("checksum", yes(in.has_checksum));
  // Only a store with entities has the block: the line would be noise elsewhere.
  if (in.has_entity_search) {
    line("entity search", "yes (" + std::to_string(in.search_entities) + " entities" +
                              (in.search_odd_labels ? ", " + std::to_string(*in.search_odd_labels) + " with odd labels"
                                                    : std::string()) +
                              ")");
  }
  if (in.index_ignored) line("index section", "ignored (seed v0.1 blocks without lengths; rebuilt)");
  line("content", std::to_string(in.content_bytes) + " bytes" +
                      (in.content_compressed ? " LZ4" : " stored") + ", " +
                      std::to_string(in.content_uncompressed) + " uncompressed");
  line("newest ts", std::to_string(in.newest_ts));
  for (size_t t = 0; t < in.type_counts.size(); ++t) {
    if (in.type_counts[t]) {
      line(std::string("  type ") + NodeTypeName(static_cast<NodeType>(t)),
           std::to_string(in.type_counts[t]));
    }
  }
  for (const auto& b : in.blocks) {
    line("  block " + b.name, std::to_string(b.length) + " bytes at " + std::to_string(b.offset));
  }
  return out;
}

VerifyReport VerifySnapshotFile(const std::string& path) {
  VerifyReport rep;
  // Pages unchecked at open: a changed byte that fits is then the checksum's
  // finding (Verify() checks the pages too), not the structure's.
  auto r = Reader::Open(path, {.check_pages = false});
  if (!r.ok()) {
    rep.status = r.status();
    rep.outcome = r.status().IsCorruption() ? VerifyReport::Outcome::kStructure
                                            : VerifyReport::Outcome::kIOError;
    return rep;
  }
  rep.has_checksum = (*r)->has_checksum();
  rep.status = (*r)->CheckIndexes();
  if (!rep.status.ok()) {
    rep.outcome = VerifyReport::Outcome::kStructure;
    return rep;
  }
  rep.status = (*r)->Verify();
  if (!rep.status.ok()) rep.outcome = VerifyReport::Outcome::kChecksum;
  return rep;
}

}  // namespace amem::snapshot
