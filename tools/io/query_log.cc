#include "tools/io/query_log.h"

#include "common/clock.h"
#include "common/files.h"
#include "common/hash.h"
#include "tools/io/json_input.h"

namespace amem::io {

namespace {

void StripIndex(OrderedJson* j) {
  if (j->is_object()) {
    j->erase("index");
    for (auto& [name, value] : j->items()) StripIndex(&value);
  } else if (j->is_array()) {
    for (auto& value : *j) StripIndex(&value);
  }
}

}  // namespace

OrderedJson ComparableAnswer(const OrderedJson& answer) {
  OrderedJson out = answer;
  if (out.is_object()) out.erase("revision");
  StripIndex(&out);
  return out;
}

std::string AnswerDigest(const OrderedJson& answer) {
  return FormatHexId(Hash64(ComparableAnswer(answer).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

Status AppendQueryLog(const std::string& path, const QueryRecord& record) {
  OrderedJson j;
  j["ts"] = NowSeconds();
  j["source"] = record.source;
  j["query"] = record.query;
  j["args"] = record.args;
  if (record.revision) {
    j["revision"] = *record.revision;
  } else {
    j["revision"] = nullptr;
  }
  j["digest"] = record.digest;
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return AppendToFile(path, line, "query log");
}

Result<QueryRecord> ParseQueryRecord(std::string_view line) {
  AMEM_ASSIGN_OR_RETURN(j, ParseJson(line, "malformed JSON", true));
  if (!j.is_object()) return Status::InvalidArgument("expected a JSON object");
  QueryRecord r;
  for (const char* field : {"source", "query", "digest"}) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) {
      return Status::InvalidArgument(std::string("missing string field \"") + field +
                                     "\" (not a line of a query log?)");
    }
  }
  r.source = j["source"].get<std::string>();
  r.query = j["query"].get<std::string>();
  r.digest = j["digest"].get<std::string>();
  if (r.source != "cli" && r.source != "mcp") {
    return Status::InvalidArgument("source \"" + r.source + "\": expected cli or mcp");
  }
  auto args = j.find("args");
  if (args == j.end()) return Status::InvalidArgument("missing field \"args\"");
  if (r.source == "cli" ? !args->is_array() : !args->is_object()) {
    return Status::InvalidArgument(r.source == "cli" ? "args: not an array of strings"
                                                     : "args: not an object");
  }
  if (r.source == "cli") {
    for (const auto& a : *args) {
      if (!a.is_string()) return Status::InvalidArgument("args: not an array of strings");
    }
  }
  r.args = OrderedJson::parse(args->dump());
  if (auto rev = j.find("revision"); rev != j.end() && rev->is_number_unsigned()) {
    r.revision = rev->get<uint64_t>();
  }
  return r;
}

}  // namespace amem::io
