#include "tools/io/ingest.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>

#include "common/model.h"
#include "tools/io/json_input.h"

namespace amem::io {

using nlohmann::json;

namespace {

// The reader's first buffer; it doubles for a longer line.
constexpr size_t kInitialBuffer = size_t{1} << 20;

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

IngestReader::IngestReader(int fd, Progress* progress)
    : fd_(fd), progress_(progress), fast_(std::make_unique<FastLineParser>()) {
  buf_.resize(kInitialBuffer + kLinePadding);
}

IngestReader::IngestReader(std::string_view text)
    : text_(text), fast_(std::make_unique<FastLineParser>()) {
  buf_.resize(std::min(kInitialBuffer, std::max<size_t>(4096, text.size())) + kLinePadding);
}

IngestReader::~IngestReader() = default;

uint64_t IngestReader::SizeHint() const {
  if (fd_ < 0) return text_.size();
  struct stat st;
  return ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
}

Status IngestReader::Rewind() {
  if (fd_ >= 0 && ::lseek(fd_, 0, SEEK_SET) != 0) {
    return Status::IOError(std::string("cannot read the input again: ") + std::strerror(errno));
  }
  text_pos_ = 0;
  begin_ = end_ = 0;
  eof_ = false;
  line_number_ = ops_ = 0;
  op_lines_.clear();
  return Status::OK();
}

Result<bool> IngestReader::Fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  size_t capacity = buf_.size() - kLinePadding;
  if (end_ == capacity) {  // one line fills the buffer
    capacity *= 2;
    buf_.resize(capacity + kLinePadding);
  }
  size_t n = 0;
  if (fd_ >= 0) {
    ssize_t got;
    do {
      got = ::read(fd_, buf_.data() + end_, capacity - end_);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return Status::IOError(std::string("cannot read the input: ") + std::strerror(errno));
    n = static_cast<size_t>(got);
  } else {
    n = std::min(capacity - end_, text_.size() - text_pos_);
    std::memcpy(buf_.data() + end_, text_.data() + text_pos_, n);
    text_pos_ += n;
  }
  end_ += n;
  if (n == 0) eof_ = true;
  return n > 0;
}

Result<bool> IngestReader::Next(Batch* piece) {
  piece->Clear();
  op_lines_.clear();
  size_t bytes = 0;  // of operation lines: a piece never ends on blank lines alone
  while (piece->size() < max_ops_ && bytes < max_bytes_) {
    const char* start = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (nl == nullptr) {
      if (!eof_) {
        Result<bool> more = Fill();
        if (!more.ok()) return more.status();
        continue;
      }
      if (begin_ == end_) break;
      nl = buf_.data() + end_;  // the last line has no newline
    }
    std::string_view line(start, static_cast<size_t>(nl - start));
    const size_t consumed = line.size() + (begin_ + line.size() < end_ ? 1 : 0);
    begin_ += consumed;
    if (progress_ != nullptr) {
      progress_->Advance(consumed);
      progress_->Count();
    }
    ++line_number_;
    if (IsBlank(line)) continue;
    bytes += consumed;
    if (line.back() == '\r') line.remove_suffix(1);
    if (!fast_->Add(line.data(), line.size(), piece)) {
      Status s = AddIngestLine(line, piece);
      if (!s.ok()) return s.WithContext("line " + std::to_string(line_number_));
    }
    op_lines_.push_back(line_number_);
    ++ops_;
  }
  return !piece->empty();
}

ReadAheadStream::~ReadAheadStream() { Wait(); }

void ReadAheadStream::Wait() {
  if (worker_.joinable()) worker_.join();
}

void ReadAheadStream::ReadNext() {
  reading_ = true;
  worker_ = std::thread([this] {
    ahead_result_ = reader_->Next(&ahead_);
    ahead_lines_ = reader_->op_lines();
  });
}

Status ReadAheadStream::Rewind() {
  Wait();
  reading_ = false;
  op_lines_.clear();
  return reader_->Rewind();
}

Result<bool> ReadAheadStream::Next(Batch* piece) {
  if (!reading_) ReadNext();  // the first piece (or the first after Rewind)
  Wait();
  reading_ = false;
  Result<bool> more = std::move(ahead_result_);
  if (!more.ok() || !*more) {
    piece->Clear();
    op_lines_.clear();
    return more;
  }
  std::swap(*piece, ahead_);
  op_lines_.swap(ahead_lines_);
  ReadNext();  // while the caller applies this one
  return true;
}

Result<IngestBatch> ParseIngest(std::string_view text, Progress* progress) {
  IngestReader reader(text);
  reader.set_piece_limits(SIZE_MAX, SIZE_MAX);
  IngestBatch out;
  Result<bool> more = reader.Next(&out.batch);
  if (!more.ok()) return more.status();
  if (progress != nullptr) progress->Advance(text.size());
  out.op_lines = reader.op_lines();
  out.lines = reader.lines();
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

namespace {

// With read_ahead, the next piece is parsed on a second thread while the store
// applies one (a file: amem ingest; a text, already in memory, is read on one).
Result<IngestSummary> IngestStream(Store* store, IngestReader* reader,
                                   const WriteOptions& options, bool read_ahead) {
  std::optional<ReadAheadStream> ahead;
  if (read_ahead) ahead.emplace(reader);
  Result<uint64_t> rev =
      ahead ? store->ApplyStream(&*ahead, options) : store->ApplyStream(reader, options);
  if (!rev.ok()) {
    return ApplyErrorToLine(rev.status(), ahead ? ahead->op_lines() : reader->op_lines());
  }
  IngestSummary summary;
  summary.rev = *rev;
  summary.ops = reader->ops();
  summary.lines = reader->lines();
  return summary;
}

}  // namespace

Result<IngestSummary> Ingest(Store* store, std::string_view text,
                             const WriteOptions& options) {
  IngestReader reader(text);
  return IngestStream(store, &reader, options, /*read_ahead=*/false);
}

Result<IngestSummary> IngestFile(Store* store, int fd, uint64_t size,
                                 const WriteOptions& options) {
  Progress progress("amem ingest");
  progress.Stage("parsing and writing in one transaction", size, "bytes", "lines");
  IngestReader reader(fd, &progress);
  return IngestStream(store, &reader, options, /*read_ahead=*/true);
}

}  // namespace amem::io
