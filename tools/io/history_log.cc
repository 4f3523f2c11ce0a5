#include "tools/io/history_log.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "common/model.h"
#include "tools/io/ingest.h"
#include "tools/io/json_input.h"
#include "tools/io/json_records.h"

namespace amem::io {

namespace {

using Kind = Change::Kind;
using OrderedJson = nlohmann::ordered_json;

void AddAttribution(OrderedJson* j, const std::optional<int64_t>& ts,
                    const std::optional<std::string>& run, const std::optional<std::string>& task,
                    const std::optional<std::string>& scope) {
  if (ts) (*j)["ts"] = *ts;
  if (run && !run->empty()) (*j)["run"] = *run;
  if (task && !task->empty()) (*j)["task"] = *task;
  if (scope && !scope->empty()) (*j)["scope"] = *scope;
}

// Adds the fields of `op` to `j`.
void AddOpFields(const Batch::Op& op, OrderedJson& j) {
  switch (op.kind) {
    case Kind::kPutNode: case Kind::kDeleteNode: {
      const NodeInput& n = op.node();
      j["op"] = op.kind == Kind::kPutNode ? "node" : "del_node";
      j["key"] = n.key;
      if (op.kind == Kind::kPutNode) {
        j["type"] = NodeTypeName(n.type);
        j["content"] = n.content;
        j["meta"] = EmbeddedJson(n.meta);
        j["confidence"] = FloatJson(n.confidence);
      }
      AddAttribution(&j, n.ts, n.run, n.task, n.scope);
      break;
    }
    case Kind::kPutEdge: case Kind::kDeleteEdge: {
      const EdgeInput& e = op.edge();
      j["op"] = op.kind == Kind::kPutEdge ? "edge" : "del_edge";
      j["src"] = e.src;
      j["rel"] = e.rel;
      j["dst"] = e.dst;
      if (op.kind == Kind::kPutEdge) {
        j["weight"] = FloatJson(e.weight);
        j["payload"] = EmbeddedJson(e.payload);
      }
      AddAttribution(&j, e.ts, e.run, e.task, std::nullopt);
      break;
    }
    case Kind::kPutKv: case Kind::kDeleteKv: {
      const KvInput& kv = op.kv();
      j["op"] = op.kind == Kind::kPutKv ? "kv" : "del_kv";
      j["scope"] = kv.scope;
      j["ns"] = kv.ns;
      j["key"] = kv.key;
      if (op.kind == Kind::kPutKv) j["value"] = kv.value;
      AddAttribution(&j, kv.ts, kv.run, kv.task, std::nullopt);
      break;
    }
    case Kind::kDefineRelation: {
      const EdgeInput& e = op.edge();
      j["op"] = "rel";
      j["name"] = e.rel;
      AddAttribution(&j, std::nullopt, e.run, e.task, std::nullopt);
      break;
    }
  }
}

// Takes the integer field `name` out of `obj`.
Result<int64_t> TakeInt(nlohmann::json* obj, const char* name) {
  auto it = obj->find(name);
  if (it == obj->end()) return Status::InvalidArgument(std::string("missing field \"") + name +
                                                       "\" (not a line of amem log?)");
  Result<int64_t> v = Int64FromJson(*it, name);
  obj->erase(it);
  return v;
}

// Parses "revision R: rest" and returns true with *rev and *rest set.
bool SplitRevisionError(const Status& status, uint64_t* rev, std::string* rest) {
  constexpr std::string_view kPrefix = "revision ";
  std::string_view msg = status.message();
  if (msg.substr(0, kPrefix.size()) != kPrefix) return false;
  const char* begin = msg.data() + kPrefix.size();
  auto [end, ec] = std::from_chars(begin, msg.data() + msg.size(), *rev);
  if (ec != std::errc() || end == begin) return false;
  rest->assign(end, msg.data() + msg.size() - end);
  return true;
}

}  // namespace

void AppendLogLines(const LoggedRevision& revision, std::string* out) {
  for (const Batch::Op& op : revision.batch.ops()) {
    OrderedJson j;
    j["rev"] = revision.rev;
    j["rev_ts"] = revision.ts;
    AddOpFields(op, j);
    out->append(j.dump());
    // A vector goes last, written directly: through JSON numbers (doubles) each
    // float would be formatted twice.
    if (op.kind == Kind::kPutNode && !op.node().vector.empty()) {
      out->pop_back();  // }
      out->append(",\"vector\":[");
      char buf[32];
      for (size_t i = 0; i < op.node().vector.size(); ++i) {
        if (i > 0) out->push_back(',');
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), op.node().vector[i]);
        out->append(buf, end);
      }
      out->append("]}");
    }
    out->push_back('\n');
  }
}

Result<ParsedLog> ParseLog(std::string_view text) {
  ParsedLog log;
  size_t line_number = 0;
  // Lines go through the ingest fast parser first (tools/io/ingest_line.h), in place
  // while the text has its padding after them, else from a padded copy; a line it
  // declines goes to the reference parser, which names the error.
  FastLineParser fast;
  Batch one;  // the fast path's operation, until its revision is known
  std::string padded;
  const char* const text_end = text.data() + text.size();
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (line.size() > kMaxLineBytes) return LineTooLong(line_number);
    if (IsBlankLine(line)) continue;
    if (line.back() == '\r') line.remove_suffix(1);
    auto fail = [&](const Status& s) {
      return s.WithContext("line " + std::to_string(line_number));
    };
    const char* data = PaddedLine(line, text_end, &padded);
    FastLineParser::LogRevision fast_rev;
    std::optional<nlohmann::json> parsed;
    Result<int64_t> rev = int64_t{0}, rev_ts = int64_t{0};
    one.Clear();
    if (fast.AddLogLine(data, line.size(), &one, &fast_rev)) {
      rev = fast_rev.rev;
      rev_ts = fast_rev.rev_ts;
    } else {
      Result<nlohmann::json> reference = ParseJson(line, "malformed JSON", true);
      if (!reference.ok()) return fail(reference.status());
      parsed = std::move(reference).value();
      if (!parsed->is_object()) return fail(Status::InvalidArgument("expected a JSON object"));
      rev = TakeInt(&*parsed, "rev");
      if (!rev.ok()) return fail(rev.status());
      rev_ts = TakeInt(&*parsed, "rev_ts");
      if (!rev_ts.ok()) return fail(rev_ts.status());
    }
    if (*rev < 1) return fail(Status::InvalidArgument("rev: must be at least 1"));
    const auto r = static_cast<uint64_t>(*rev);
    if (log.revisions.empty() || log.revisions.back().rev != r) {
      if (!log.revisions.empty() && r != log.revisions.back().rev + 1) {
        const uint64_t prev = log.revisions.back().rev;
        return fail(Status::InvalidArgument(
            r <= prev ? "revision " + std::to_string(r) + " after revision " +
                            std::to_string(prev) + ": revisions must ascend"
                      : "revision " + std::to_string(r) + " follows revision " +
                            std::to_string(prev) + ": revision " + std::to_string(prev + 1) +
                            " is missing"));
      }
      LoggedRevision next;
      next.rev = r;
      next.ts = *rev_ts;
      log.revisions.push_back(std::move(next));
      log.op_lines.emplace_back();
    } else if (log.revisions.back().ts != *rev_ts) {
      return fail(Status::InvalidArgument(
          "rev_ts " + std::to_string(*rev_ts) + " differs from the " +
          std::to_string(log.revisions.back().ts) + " of revision " + std::to_string(r) +
          "'s earlier lines"));
    }
    Batch& batch = log.revisions.back().batch;
    if (parsed) {
      AMEM_RETURN_IF_ERROR(fail(AddIngestOp(*parsed, &batch)));
    } else {
      batch.Append(std::move(one));
    }
    const Batch::Op& added = batch.ops().back();
    if (log.vector_size == 0 && added.kind == Kind::kPutNode) {
      log.vector_size = static_cast<uint32_t>(added.node().vector.size());
    }
    log.op_lines.back().push_back(line_number);
    ++log.ops;
  }
  log.lines = line_number;
  return log;
}

Status ReplayErrorToLine(const Status& status, const ParsedLog& log) {
  uint64_t rev = 0;
  std::string rest;
  if (status.ok() || log.revisions.empty() || !SplitRevisionError(status, &rev, &rest)) {
    return status;
  }
  const uint64_t first = log.revisions.front().rev;
  if (rev < first || rev - first >= log.revisions.size()) return status;
  const std::vector<size_t>& lines = log.op_lines[rev - first];
  if (rest.substr(0, 2) == ": ") rest.erase(0, 2);
  size_t k = 0;
  std::string after_op;
  Status inner = WithMessage(status, rest);
  if (SplitOpError(inner, &k, &after_op) && k < lines.size()) {
    return WithMessage(status, "line " + std::to_string(lines[k]) + after_op);
  }
  return WithMessage(status, "line " + std::to_string(lines.front()) + ": revision " +
                                 std::to_string(rev) + ": " + rest);
}

}  // namespace amem::io
