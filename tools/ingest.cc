#include "tools/ingest.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>

#include "common/model.h"
#include "tools/json_input.h"

namespace amem::cli {

using nlohmann::json;

namespace {

// The store names a failing batch operation "op K: ..." with K counted from 0.
constexpr size_t kStoreFirstOpNumber = 0;

Status CheckFields(const json& obj, std::string_view op,
                   std::initializer_list<std::string_view> allowed) {
  static constexpr std::string_view kCommon[] = {"op", "ts", "run", "task", "scope"};
  for (const auto& item : obj.items()) {
    const std::string& name = item.key();
    bool ok = std::find(std::begin(kCommon), std::end(kCommon), name) != std::end(kCommon) ||
              std::find(allowed.begin(), allowed.end(), name) != allowed.end();
    if (!ok) {
      return Status::InvalidArgument("unknown field \"" + name + "\" for op \"" +
                                     std::string(op) + "\"");
    }
  }
  return Status::OK();
}

Status ReadString(const json& obj, const char* name, std::string* out) {
  auto it = obj.find(name);
  if (it == obj.end()) {
    return Status::InvalidArgument(std::string("missing field \"") + name + "\"");
  }
  Result<std::string> s = StringFromJson(*it, name);
  if (!s.ok()) return s.status();
  *out = std::move(s).value();
  return Status::OK();
}

Status ReadOptString(const json& obj, const char* name, std::optional<std::string>* out) {
  auto it = obj.find(name);
  if (it == obj.end()) return Status::OK();
  Result<std::string> s = StringFromJson(*it, name);
  if (!s.ok()) return s.status();
  *out = std::move(s).value();
  return Status::OK();
}

Status ReadOptFloat(const json& obj, const char* name, float* out) {
  auto it = obj.find(name);
  if (it == obj.end()) return Status::OK();
  Result<float> f = FiniteFloatFromJson(*it, name);
  if (!f.ok()) return f.status();
  *out = *f;
  return Status::OK();
}

// ts, run, task (and scope, which only nodes record) of one line.
struct Attribution {
  std::optional<int64_t> ts;
  std::optional<std::string> run, task, scope;
};

Status ReadAttribution(const json& obj, Attribution* a) {
  if (auto it = obj.find("ts"); it != obj.end()) {
    Result<int64_t> ts = Int64FromJson(*it, "ts");
    if (!ts.ok()) return ts.status();
    a->ts = *ts;
  }
  AMEM_RETURN_IF_ERROR(ReadOptString(obj, "run", &a->run));
  AMEM_RETURN_IF_ERROR(ReadOptString(obj, "task", &a->task));
  return ReadOptString(obj, "scope", &a->scope);
}

Status AddNode(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(
      CheckFields(obj, "node", {"key", "type", "content", "meta", "confidence", "vector"}));
  NodeInput node;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "key", &node.key));
  std::string type;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "type", &type));
  std::optional<NodeType> parsed_type = ParseNodeType(type);
  if (!parsed_type) return Status::InvalidArgument("unknown node type \"" + type + "\"");
  node.type = *parsed_type;
  std::optional<std::string> content;
  AMEM_RETURN_IF_ERROR(ReadOptString(obj, "content", &content));
  if (content) node.content = std::move(*content);
  if (auto it = obj.find("meta"); it != obj.end()) {
    Result<std::string> meta = ObjectTextFromJson(*it, "meta");
    if (!meta.ok()) return meta.status();
    node.meta = std::move(meta).value();
  }
  AMEM_RETURN_IF_ERROR(ReadOptFloat(obj, "confidence", &node.confidence));
  if (auto it = obj.find("vector"); it != obj.end()) {
    Result<std::vector<float>> vec = VectorFromJson(*it, "vector");
    if (!vec.ok()) return vec.status();
    node.vector = std::move(vec).value();
  }
  node.ts = a.ts;
  node.run = a.run;
  node.task = a.task;
  node.scope = a.scope;
  batch->PutNode(std::move(node));
  return Status::OK();
}

Status AddEdge(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(CheckFields(obj, "edge", {"src", "rel", "dst", "weight", "payload"}));
  EdgeInput edge;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "src", &edge.src));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "rel", &edge.rel));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "dst", &edge.dst));
  AMEM_RETURN_IF_ERROR(ReadOptFloat(obj, "weight", &edge.weight));
  if (auto it = obj.find("payload"); it != obj.end()) edge.payload = it->dump();
  edge.ts = a.ts;
  edge.run = a.run;
  edge.task = a.task;
  batch->PutEdge(std::move(edge));
  return Status::OK();
}

Status AddKv(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(CheckFields(obj, "kv", {"ns", "key", "value"}));
  KvInput kv;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "scope", &kv.scope));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "ns", &kv.ns));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "key", &kv.key));
  auto it = obj.find("value");
  if (it == obj.end()) return Status::InvalidArgument("missing field \"value\"");
  if (it->is_string()) {
    kv.value = it->get<std::string>();
  } else if (it->is_object() || it->is_array()) {
    kv.value = it->dump();
  } else {
    return Status::InvalidArgument("value: not a string, object or array");
  }
  kv.ts = a.ts;
  kv.run = a.run;
  kv.task = a.task;
  batch->PutKv(std::move(kv));
  return Status::OK();
}

Status AddDeleteNode(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(CheckFields(obj, "del_node", {"key"}));
  NodeInput node;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "key", &node.key));
  node.ts = a.ts;
  node.run = a.run;
  node.task = a.task;
  node.scope = a.scope;
  batch->DeleteNode(std::move(node));
  return Status::OK();
}

Status AddDeleteEdge(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(CheckFields(obj, "del_edge", {"src", "rel", "dst"}));
  EdgeInput edge;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "src", &edge.src));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "rel", &edge.rel));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "dst", &edge.dst));
  edge.ts = a.ts;
  edge.run = a.run;
  edge.task = a.task;
  batch->DeleteEdge(std::move(edge));
  return Status::OK();
}

Status AddDeleteKv(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(CheckFields(obj, "del_kv", {"ns", "key"}));
  KvInput kv;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "scope", &kv.scope));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "ns", &kv.ns));
  AMEM_RETURN_IF_ERROR(ReadString(obj, "key", &kv.key));
  kv.ts = a.ts;
  kv.run = a.run;
  kv.task = a.task;
  batch->DeleteKv(std::move(kv));
  return Status::OK();
}

Status AddDefineRelation(const json& obj, const Attribution& a, Batch* batch) {
  AMEM_RETURN_IF_ERROR(CheckFields(obj, "rel", {"name"}));
  EdgeInput relation;
  AMEM_RETURN_IF_ERROR(ReadString(obj, "name", &relation.rel));
  relation.run = a.run;
  relation.task = a.task;
  batch->DefineRelation(std::move(relation));
  return Status::OK();
}

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

Status AddIngestOp(const json& op, Batch* batch) {
  if (!op.is_object()) return Status::InvalidArgument("expected a JSON object");
  auto it = op.find("op");
  if (it == op.end()) return Status::InvalidArgument("missing field \"op\"");
  if (!it->is_string()) return Status::InvalidArgument("op: not a string");
  const std::string& kind = it->get_ref<const std::string&>();
  Attribution a;
  AMEM_RETURN_IF_ERROR(ReadAttribution(op, &a));
  if (kind == "node") return AddNode(op, a, batch);
  if (kind == "edge") return AddEdge(op, a, batch);
  if (kind == "kv") return AddKv(op, a, batch);
  if (kind == "del_node") return AddDeleteNode(op, a, batch);
  if (kind == "del_edge") return AddDeleteEdge(op, a, batch);
  if (kind == "del_kv") return AddDeleteKv(op, a, batch);
  if (kind == "rel") return AddDefineRelation(op, a, batch);
  return Status::InvalidArgument("unknown op \"" + kind +
                                 "\" (node, edge, kv, del_node, del_edge, del_kv, rel)");
}

Status AddIngestLine(std::string_view line, Batch* batch) {
  Result<json> parsed = ParseJson(line, "malformed JSON", /*reject_duplicate_keys=*/true);
  if (!parsed.ok()) return parsed.status();
  return AddIngestOp(*parsed, batch);
}

Result<IngestBatch> ParseIngest(std::string_view text, Progress* progress) {
  IngestBatch out;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    size_t consumed = end == std::string_view::npos ? text.size() : end + 1;
    text.remove_prefix(consumed);
    if (progress != nullptr) progress->Advance(consumed);
    ++line_number;
    if (IsBlank(line)) continue;
    if (line.back() == '\r') line.remove_suffix(1);
    Status s = AddIngestLine(line, &out.batch);
    if (!s.ok()) return s.WithContext("line " + std::to_string(line_number));
    out.op_lines.push_back(line_number);
  }
  out.lines = line_number;
  return out;
}

bool SplitOpError(const Status& status, size_t* k, std::string* rest) {
  std::string_view msg = status.message();
  if (status.ok() || msg.substr(0, 3) != "op ") return false;
  const char* begin = msg.data() + 3;
  auto [end, ec] = std::from_chars(begin, msg.data() + msg.size(), *k);
  if (ec != std::errc() || end == begin || *k < kStoreFirstOpNumber) return false;
  *k -= kStoreFirstOpNumber;
  rest->assign(end, msg.data() + msg.size() - end);
  return true;
}

Status WithMessage(const Status& status, std::string message) {
  switch (status.code()) {
    case Status::Code::kOk: return status;
    case Status::Code::kNotFound: return Status::NotFound(message);
    case Status::Code::kCorruption: return Status::Corruption(message);
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(message);
    case Status::Code::kIOError: return Status::IOError(message);
    case Status::Code::kNotSupported: return Status::NotSupported(message);
    case Status::Code::kAborted: return Status::Aborted(message);
  }
  return status;
}

Status ApplyErrorToLine(const Status& status, const std::vector<size_t>& op_lines) {
  size_t k = 0;
  std::string rest;
  if (!SplitOpError(status, &k, &rest) || k >= op_lines.size()) return status;
  return WithMessage(status, "line " + std::to_string(op_lines[k]) + rest);
}

Result<IngestSummary> Ingest(Store* store, std::string_view text,
                             const WriteOptions& options) {
  Progress progress("amem ingest");
  progress.Stage("parsing", text.size(), "bytes");
  Result<IngestBatch> parsed = ParseIngest(text, &progress);
  if (!parsed.ok()) return parsed.status();
  IngestSummary summary;
  summary.ops = parsed->batch.size();
  summary.lines = parsed->lines;
  progress.Stage("writing " + std::to_string(summary.ops) + " operations in one transaction");
  Result<uint64_t> rev = store->Apply(parsed->batch, options);
  if (!rev.ok()) return ApplyErrorToLine(rev.status(), parsed->op_lines);
  summary.rev = *rev;
  return summary;
}

}  // namespace amem::cli
