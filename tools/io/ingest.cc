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

#include "common/huge_pages.h"
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

}  // namespace

bool IsBlankLine(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

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

namespace {

// One operation line into `piece`: the fast parser, else the reference parser,
// which names the error.
Status ParseOpLine(FastLineParser* parser, std::string_view line, size_t number, Batch* piece) {
  if (parser->Add(line.data(), line.size(), piece)) return Status::OK();
  Status s = AddIngestLine(line, piece);
  return s.ok() ? s : s.WithContext("line " + std::to_string(number));
}

}  // namespace

Status LineTooLong(size_t line_number) {
  return Status::InvalidArgument("line " + std::to_string(line_number) + ": longer than " +
                                 std::to_string(kMaxLineBytes) +
                                 " bytes (the longest line amem reads; docs/LOG.md)");
}

template <typename OnLine>
Result<bool> IngestReader::ReadPiece(OnLine&& on_line) {
  size_t ops = 0;
  size_t bytes = 0;  // of operation lines: a piece never ends on blank lines alone
  while (ops < max_ops_ && bytes < max_bytes_) {
    const char* start = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (nl == nullptr) {
      // Refused before more of it is read: memory stays bounded.
      if (end_ - begin_ > kMaxLineBytes) return LineTooLong(line_number_ + 1);
      if (!eof_) {
        Result<bool> more = Fill();
        if (!more.ok()) return more.status();
        continue;
      }
      if (begin_ == end_) break;
      nl = buf_.data() + end_;  // the last line has no newline
    }
    std::string_view line(start, static_cast<size_t>(nl - start));
    if (line.size() > kMaxLineBytes) return LineTooLong(line_number_ + 1);
    const size_t consumed = line.size() + (begin_ + line.size() < end_ ? 1 : 0);
    begin_ += consumed;
    if (progress_ != nullptr) {
      progress_->Advance(consumed);
      progress_->Count();
    }
    ++line_number_;
    if (IsBlankLine(line)) continue;
    bytes += consumed;
    if (line.back() == '\r') line.remove_suffix(1);
    if (!on_line(line, line_number_)) break;
    ++ops;
    ++ops_;
  }
  return ops > 0;
}

Result<bool> IngestReader::Next(Batch* piece) {
  piece->Clear();
  op_lines_.clear();
  Status error;
  Result<bool> more = ReadPiece([&](std::string_view line, size_t number) {
    error = ParseOpLine(fast_.get(), line, number, piece);
    if (error.ok()) op_lines_.push_back(number);
    return error.ok();
  });
  if (!error.ok()) return error;
  return more;
}

Result<bool> IngestReader::Cut(RawPiece* raw) {
  raw->Clear();
  // Room for a whole piece at once, in huge pages where the kernel gives them: the
  // first touch of 16 MiB in 4 KiB pages would cost ~50 ms before the first write.
  // A piece may run over max_bytes_ by its last line: some slack keeps it in this room.
  constexpr size_t kSlack = size_t{1} << 20;
  const uint64_t hint = SizeHint();
  const size_t limit = max_bytes_ > SIZE_MAX - kSlack ? SIZE_MAX : max_bytes_ + kSlack;
  const size_t room = static_cast<size_t>(
      std::min<uint64_t>(limit, hint > 0 ? hint : kIngestPieceBytes + kSlack) + kLinePadding);
  if (raw->text_.capacity() < room) ReserveHuge(&raw->text_, room);
  Result<bool> more = ReadPiece([raw](std::string_view line, size_t number) {
    raw->lines_.push_back({raw->text_.size(), line.size(), number});
    raw->text_.append(line);
    raw->text_.push_back('\n');
    return true;
  });
  raw->text_.append(kLinePadding, '\0');
  return more;
}

Status IngestReader::ParsePiece(const RawPiece& raw, FastLineParser* parser, Batch* piece,
                                std::vector<size_t>* op_lines) {
  piece->Clear();
  piece->Reserve(raw.lines_.size());  // the pieces' room goes round (ReadAheadStream)
  op_lines->clear();
  for (const RawPiece::Line& line : raw.lines_) {
    AMEM_RETURN_IF_ERROR(ParseOpLine(
        parser, std::string_view(raw.text_.data() + line.offset, line.size), line.number, piece));
    op_lines->push_back(line.number);
  }
  return Status::OK();
}

ReadAheadStream::ReadAheadStream(IngestReader* reader, size_t threads)
    : reader_(reader), slots_(std::max<size_t>(threads, 1)) {}

ReadAheadStream::~ReadAheadStream() { Stop(); }

void ReadAheadStream::Start() {
  cut_ = taken_ = 0;
  stop_ = cut_done_ = false;
  for (Slot& slot : slots_) slot.ready = false;
  for (size_t i = 0; i < slots_.size(); ++i) threads_.emplace_back([this] { Work(); });
}

void ReadAheadStream::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void ReadAheadStream::Work() {
  FastLineParser parser;
  for (;;) {
    // Pieces are cut one thread at a time, in order; piece k goes to slot k % n
    // once Next has taken piece k - n out of it.
    std::unique_lock cut_lock(cut_mu_);
    uint64_t k = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || cut_done_ || cut_ < taken_ + slots_.size(); });
      if (stop_ || cut_done_) return;
      k = cut_++;
    }
    Slot& slot = slots_[k % slots_.size()];
    slot.work_result.reset();
    Result<bool> more = false;
    try {
      more = reader_->Cut(&slot.raw);
      cut_lock.unlock();
      // The lines cut before a read error come first: a bad one among them wins.
      if (!slot.raw.empty()) {
        Status parsed = IngestReader::ParsePiece(slot.raw, &parser, &slot.batch, &slot.lines);
        if (!parsed.ok()) {
          more = parsed;
        } else if (more.ok() && work_) {
          slot.work_result = work_(slot.batch);
        }
      }
    } catch (const std::exception& e) {  // std::bad_alloc: an error, not std::terminate
      more = Status::Aborted(std::string("reading the input: ") + e.what());
    }
    const bool last = !more.ok() || !*more;  // the end or an error: no pieces after it
    {
      std::lock_guard lock(mu_);
      slot.result = std::move(more);
      slot.ready = true;
      if (last) cut_done_ = true;
    }
    cv_.notify_all();
  }
}

Status ReadAheadStream::Rewind() {
  Stop();
  op_lines_.clear();
  work_result_.reset();
  must_rewind_ = false;
  final_.reset();
  return reader_->Rewind();
}

void ReadAheadStream::SetPieceWork(PieceWork work) {
  // Pieces read ahead and not yet handed out were made with the old work: they
  // are dropped, and Next refuses until the stream is rewound. After the end or
  // an error there is nothing to drop: Next keeps returning it.
  if (!threads_.empty() && !final_) must_rewind_ = true;
  Stop();
  work_ = std::move(work);
  // What the old work made may point into pieces its caller no longer has.
  work_result_.reset();
  for (Slot& slot : slots_) slot.work_result.reset();
}

Result<bool> ReadAheadStream::Next(Batch* piece) {
  if (final_) {  // the end or an error, again on every later call
    piece->Clear();
    op_lines_.clear();
    work_result_.reset();
    return *final_;
  }
  if (must_rewind_) {
    return Status::Aborted("the pieces read ahead were dropped (SetPieceWork): rewind first");
  }
  if (threads_.empty()) Start();  // the first piece (or the first after Rewind)
  std::unique_lock lock(mu_);
  Slot& slot = slots_[taken_ % slots_.size()];
  cv_.wait(lock, [&] { return slot.ready; });
  work_result_.reset();
  if (!slot.result.ok() || !*slot.result) {  // the end or an error
    piece->Clear();
    op_lines_.clear();
    final_.emplace(slot.result);
    return slot.result;
  }
  std::swap(*piece, slot.batch);
  op_lines_.swap(slot.lines);
  work_result_ = std::move(slot.work_result);
  slot.ready = false;
  ++taken_;
  lock.unlock();
  cv_.notify_all();
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
