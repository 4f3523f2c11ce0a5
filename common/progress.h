// Progress lines for long operations: one line on stderr, redrawn in place while an
// ingest, export, betweenness or consolidation runs, erased when it ends.
//
// Off unless the application turns it on. The amem CLI turns it on when stderr is a
// terminal; `amem mcp`, pipes, redirects and library users never see a line. A line
// appears only once an operation has run longer than ConfigureProgress's delay, so
// quick commands print nothing extra. Progress never changes what an operation
// computes or prints on stdout.
//
//   Progress p("export");
//   p.Stage("reading the store");
//   ...
//   p.Stage("building", nodes, "nodes");
//   for (...) p.Advance();        // any thread; one relaxed atomic add
//
// A line shows its rate once the operation is a second old ("85.2 MB/s" for
// bytes), and a second count with its own rate when the stage names one
// (ingest: bytes of the file, and lines):
//   amem ingest: parsing 45% (107/238 MB) 45000 lines; 85.2 MB/s, 40000 lines/s 1.3s
#ifndef AMEM_COMMON_PROGRESS_H_
#define AMEM_COMMON_PROGRESS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace amem {

struct ProgressConfig {
  bool enabled = false;
  std::FILE* out = nullptr;  // nullptr: stderr
  uint32_t delay_ms = 300;   // nothing is drawn before an operation is this old
  uint32_t interval_ms = 100;  // redraw period
};

// Process-wide; the default is off.
void ConfigureProgress(const ProgressConfig& config);
// On exactly when `stderr_is_terminal` (the CLI passes isatty(2)), with the defaults.
void EnableProgressOnTerminal(bool stderr_is_terminal);
bool ProgressEnabled();

class Progress {
 public:
  // `operation` names the line ("amem export"). When progress is off the object
  // costs one branch per call and starts no thread.
  explicit Progress(std::string operation);
  ~Progress();  // erases the line if one was drawn
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a stage and resets the count; `total` 0 means unknown (the line then
  // shows the stage and the time only). Call from one thread, between Advances.
  // `count_unit`: the unit of a second count (Count), e.g. "lines"; empty: none.
  void Stage(std::string_view name, uint64_t total = 0, std::string_view unit = {},
             std::string_view count_unit = {});
  void Advance(uint64_t n = 1) {
    if (active_) done_.fetch_add(n, std::memory_order_relaxed);
  }
  void Count(uint64_t n = 1) {
    if (active_) counted_.fetch_add(n, std::memory_order_relaxed);
  }

 private:
  void Run();
  void Draw(uint64_t elapsed_ms);

  const bool active_;
  const std::string operation_;
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> counted_{0};
  std::mutex mu_;  // guards the stage fields, stop_ and line_
  std::condition_variable wake_;
  std::string stage_;
  std::string unit_;
  std::string count_unit_;
  uint64_t total_ = 0;
  bool stop_ = false;
  std::string line_;  // the ticker's scratch
  std::thread ticker_;
};

}  // namespace amem

#endif  // AMEM_COMMON_PROGRESS_H_
