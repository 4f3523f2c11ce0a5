// JSON Lines ingest (docs/DESIGN.md §6): the bulk write path for agents, the MCP server
// and benchmarks. Each non-blank line is one JSON object, one operation:
//
//   {"op":"node","key":K,"type":T,"content":S,"meta":{..},"confidence":F,"vector":[..]}
//   {"op":"edge","src":K,"rel":R,"dst":K,"weight":F,"payload":JSON}
//   {"op":"kv","scope":S,"ns":N,"key":K,"value":S|{..}|[..]}
//   {"op":"del_node","key":K}
//   {"op":"del_edge","src":K,"rel":R,"dst":K}
//   {"op":"del_kv","scope":S,"ns":N,"key":K}
//   {"op":"rel","name":NAME}          defines a custom relation
//
// Required: op; node key and type; edge src, rel, dst; kv scope, ns, key, value;
// del_* their identifying fields; rel name. Any line may also carry "ts" (integer
// Unix seconds), "run", "task" and "scope" (strings); they override the ingest's
// defaults for that operation where the operation records them (nodes and
// del_node: all four; edges, kv and their deletes: ts, run, task; rel: run, task).
// `amem log` lines (docs/LOG.md) are these lines plus "rev" and "rev_ts".
// A kv value that is an object or array is stored as its compact JSON text.
//
// A bad line (malformed JSON, not an object, unknown op or field, a field of the
// wrong type, an unknown node type, a non-finite number, a repeated field) rejects
// the whole input with "line N: ..."; so do errors the store finds when it applies
// the batch (unknown relation, wrong vector dimension, invalid UTF-8, oversized
// text, id collision), which it reports as "op K" and which are mapped back to
// their line. Nothing is written unless every line is good.
#ifndef AMEM_TOOLS_IO_INGEST_H_
#define AMEM_TOOLS_IO_INGEST_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/progress.h"
#include "common/status.h"
#include "store/store.h"
#include "tools/io/ingest_line.h"

namespace amem::io {

struct IngestBatch {
  Batch batch;
  std::vector<size_t> op_lines;  // 1-based input line of each batch operation
  size_t lines = 0;              // lines read, blank ones included
};

// Appends the operation described by `op` (one parsed ingest line) to `batch`.
// Errors do not name a line; `batch` is unchanged on error.
Status AddIngestOp(const nlohmann::json& op, Batch* batch);

// Parses one ingest line (JSON text) and appends its operation to `batch`.
Status AddIngestLine(std::string_view line, Batch* batch);

// The longest line ingest, replay and replay-queries read (docs/LOG.md): room for
// a node of the largest content (kMaxContentBytes) with every byte escaped as
// \u00XX, and its meta and vector. A longer line is refused before more of it is
// read, so a hostile line costs at most about twice this much memory.
inline constexpr size_t kMaxLineBytes = size_t{16} << 20;
// InvalidArgument "line N: longer than 16777216 bytes (the cap of a line, ...)".
Status LineTooLong(size_t line_number);
// True when the line holds only spaces, tabs and carriage returns: skipped, but
// counted, by every JSON Lines reader.
bool IsBlankLine(std::string_view line);

// Parses a whole JSON Lines text; errors are "line N: ...". Lines end with "\n"
// ("\r\n" accepted); blank lines are skipped but counted.
Result<IngestBatch> ParseIngest(std::string_view text, Progress* progress = nullptr);

// The bounded-memory ingest: JSON Lines read from a file descriptor (or a string) a
// piece at a time, each piece at most kIngestPieceOps operations or about
// kIngestPieceBytes of input (a longer line is one piece), handed to
// Store::ApplyStream. Lines go through the fast parser (tools/io/ingest_line.h) and,
// when it declines one, through AddIngestLine, which names the error.
inline constexpr size_t kIngestPieceOps = 65536;
inline constexpr size_t kIngestPieceBytes = size_t{16} << 20;

class IngestReader : public BatchStream {
 public:
  // Reads `fd` from offset 0; Rewind seeks back. REQUIRES: fd is seekable and
  // outlives the reader.
  IngestReader(int fd, Progress* progress);
  // Reads `text`, which must outlive the reader.
  explicit IngestReader(std::string_view text);
  ~IngestReader() override;

  Status Rewind() override;
  Result<bool> Next(Batch* piece) override;  // errors: "line N: ..."
  // The input's size in bytes: the store keeps about as much (the 1M workload with
  // vectors: 2.38 GB of input, 2.13 GB of store) to three times as much (short
  // lines: 200K edges of 60 bytes, 11.9 MB, take 34.8 MB).
  uint64_t SizeHint() const override;

  // The input line of each operation of the last piece.
  const std::vector<size_t>& op_lines() const { return op_lines_; }
  size_t lines() const { return line_number_; }  // lines read, blank ones included
  size_t ops() const { return ops_; }             // operations read
  // Test hook and ParseIngest: the piece size (defaults kIngestPieceOps and
  // kIngestPieceBytes).
  void set_piece_limits(size_t ops, size_t bytes) {
    max_ops_ = ops;
    max_bytes_ = bytes;
  }

  // Next in two steps, so that pieces can be parsed on several threads while
  // they are cut in order (ReadAheadStream): Cut copies the next piece's
  // operation lines out of the input (false at its end, as Next), and ParsePiece
  // parses them with `parser` into `piece` and their line numbers into
  // `op_lines` (errors: "line N: ..."). Cut is sequential; ParsePiece of
  // different pieces may run at once, each with its own parser.
  class RawPiece {
   public:
    void Clear() {
      text_.clear();
      lines_.clear();
    }
    bool empty() const { return lines_.empty(); }

   private:
    friend class IngestReader;
    struct Line {
      size_t offset, size, number;
    };
    std::string text_;  // the lines, each followed by '\n', then kLinePadding bytes
    std::vector<Line> lines_;
  };
  Result<bool> Cut(RawPiece* raw);
  static Status ParsePiece(const RawPiece& raw, FastLineParser* parser, Batch* piece,
                           std::vector<size_t>* op_lines);

 private:
  // Reads more input after the unread bytes; false at the end of the input.
  Result<bool> Fill();
  // Reads the next piece's operation lines and calls on_line(line, line_number)
  // for each until it returns false; true if it was called at all.
  template <typename OnLine>
  Result<bool> ReadPiece(OnLine&& on_line);

  int fd_ = -1;
  std::string_view text_;
  Progress* progress_ = nullptr;
  size_t text_pos_ = 0;
  std::string buf_;  // [begin_, end_) unread; kLinePadding readable bytes after end_
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  size_t line_number_ = 0, ops_ = 0;
  size_t max_ops_ = kIngestPieceOps, max_bytes_ = kIngestPieceBytes;
  std::vector<size_t> op_lines_;
  std::unique_ptr<FastLineParser> fast_;
};

// Parses an IngestReader's next pieces on other threads while the store applies
// the one before, so that parsing and writing overlap (amem ingest of a file).
// The pieces are cut in order and parsed by `threads` threads at once (a piece
// of nodes with vectors takes about twice as long to parse as to write). The
// pieces, their order and every error are the reader's: a piece's parse error is
// returned by the Next call that would have read it, after the pieces before it
// were applied. At most threads + 1 pieces are in memory, and `threads` copies
// of a piece's lines.
inline constexpr size_t kReadAheadThreads = 2;

class ReadAheadStream : public BatchStream {
 public:
  explicit ReadAheadStream(IngestReader* reader, size_t threads = kReadAheadThreads);
  ~ReadAheadStream() override;  // stops the threads

  Status Rewind() override;
  Result<bool> Next(Batch* piece) override;
  uint64_t SizeHint() const override { return reader_->SizeHint(); }
  // The work runs on the parsing threads, after a piece parsed without error.
  // Set it before reading (ApplyStream sets it, then rewinds): pieces read ahead
  // with other work are dropped, and Next fails with Aborted until Rewind.
  void SetPieceWork(PieceWork work) override;
  std::shared_ptr<void> PieceWorkResult() override { return work_result_; }
  // The input line of each operation of the piece Next returned last.
  const std::vector<size_t>& op_lines() const { return op_lines_; }

 private:
  // Piece k, cut and parsed by a thread, waits in slots_[k % threads] for Next.
  struct Slot {
    IngestReader::RawPiece raw;
    Batch batch;
    std::vector<size_t> lines;
    std::shared_ptr<void> work_result;
    Result<bool> result = false;
    bool ready = false;
  };
  void Start();
  void Stop();
  void Work();

  IngestReader* reader_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::mutex mu_;      // guards the fields below and the slots' `ready`
  std::mutex cut_mu_;  // held while a thread cuts the next piece
  std::condition_variable cv_;
  uint64_t cut_ = 0, taken_ = 0;  // pieces cut; pieces handed out by Next
  bool stop_ = false, cut_done_ = false;
  std::vector<size_t> op_lines_;
  PieceWork work_;                    // read by the threads; set while none runs
  std::shared_ptr<void> work_result_;  // of the piece Next returned last
  std::optional<Result<bool>> final_;  // the end or the error Next returned
  bool must_rewind_ = false;           // SetPieceWork dropped pieces read ahead
};

// Store::Apply names a failing operation "op K: ...". Returns true and sets *k and
// *rest (the message after "op K") if `status` has that form.
bool SplitOpError(const Status& status, size_t* k, std::string* rest);
// `status` with the same code and message `message`.
Status WithMessage(const Status& status, std::string message);

// Rewrites an error of Store::Apply on a parsed batch ("op K: ...") as
// "line N: ...". Other errors are returned unchanged.
Status ApplyErrorToLine(const Status& status, const std::vector<size_t>& op_lines);

struct IngestSummary {
  uint64_t rev = 0;   // the committed revision (unchanged if there were no ops)
  size_t ops = 0;
  size_t lines = 0;
};

// Parses `text` and applies it to `store` in one transaction.
Result<IngestSummary> Ingest(Store* store, std::string_view text,
                             const WriteOptions& options);
// The same for the file open as `fd` (seekable), streamed: memory stays bounded by
// a piece of operations whatever the file's size. `size` (0: unknown) is for
// progress only.
Result<IngestSummary> IngestFile(Store* store, int fd, uint64_t size,
                                 const WriteOptions& options);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_INGEST_H_
