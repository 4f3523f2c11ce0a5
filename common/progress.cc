#include "common/progress.h"

#include <chrono>
#include <utility>

namespace amem {
namespace {

std::mutex g_config_mu;
ProgressConfig g_config;

ProgressConfig CurrentConfig() {
  std::lock_guard<std::mutex> lock(g_config_mu);
  return g_config;
}

}  // namespace

void ConfigureProgress(const ProgressConfig& config) {
  std::lock_guard<std::mutex> lock(g_config_mu);
  g_config = config;
}

void EnableProgressOnTerminal(bool stderr_is_terminal) {
  ProgressConfig config;
  config.enabled = stderr_is_terminal;
  ConfigureProgress(config);
}

bool ProgressEnabled() { return CurrentConfig().enabled; }

Progress::Progress(std::string operation)
    : active_(ProgressEnabled()), operation_(std::move(operation)) {
  if (active_) ticker_ = std::thread([this] { Run(); });
}

Progress::~Progress() {
  if (!active_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  ticker_.join();
}

void Progress::Stage(std::string_view name, uint64_t total, std::string_view unit,
                     std::string_view count_unit) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mu_);
  stage_ = name;
  unit_ = unit;
  count_unit_ = count_unit;
  total_ = total;
  done_.store(0, std::memory_order_relaxed);
  counted_.store(0, std::memory_order_relaxed);
}

void Progress::Run() {
  const ProgressConfig config = CurrentConfig();
  std::FILE* out = config.out != nullptr ? config.out : stderr;
  const auto start = std::chrono::steady_clock::now();
  const auto first = start + std::chrono::milliseconds(config.delay_ms);
  const auto interval = std::chrono::milliseconds(config.interval_ms);
  std::unique_lock<std::mutex> lock(mu_);
  if (wake_.wait_until(lock, first, [this] { return stop_; })) return;
  for (;;) {
    auto elapsed = std::chrono::steady_clock::now() - start;
    Draw(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
    std::fputs(line_.c_str(), out);
    std::fflush(out);
    if (wake_.wait_for(lock, interval, [this] { return stop_; })) break;
  }
  std::fputs("\r\x1b[K", out);  // erase the line: the command's own output follows
  std::fflush(out);
}

// Builds the line in line_ (mu_ held): "\r<erase>amem export: building 45%
// (45000/100000 nodes) 1.2s".
void Progress::Draw(uint64_t elapsed_ms) {
  const uint64_t done = done_.load(std::memory_order_relaxed);
  line_ = "\r\x1b[K" + operation_;
  if (!stage_.empty()) line_ += ": " + stage_;
  if (total_ > 0) {
    uint64_t shown = done < total_ ? done : total_;
    line_ += " " + std::to_string(shown * 100 / total_) + "% (" + std::to_string(shown) + "/" +
             std::to_string(total_) + (unit_.empty() ? "" : " " + unit_) + ")";
  } else if (done > 0) {
    line_ += " " + std::to_string(done) + (unit_.empty() ? "" : " " + unit_);
  }
  const uint64_t counted = counted_.load(std::memory_order_relaxed);
  if (!count_unit_.empty()) line_ += " " + std::to_string(counted) + " " + count_unit_;
  if (elapsed_ms >= 1000 && (done > 0 || counted > 0)) {
    const double seconds = static_cast<double>(elapsed_ms) / 1000.0;
    char rate[96];
    if (unit_ == "bytes") {
      std::snprintf(rate, sizeof rate, "; %.1f MB/s", static_cast<double>(done) / 1e6 / seconds);
    } else {
      std::snprintf(rate, sizeof rate, "; %.0f %s/s", static_cast<double>(done) / seconds,
                    unit_.empty() ? "items" : unit_.c_str());
    }
    line_ += rate;
    if (!count_unit_.empty()) {
      std::snprintf(rate, sizeof rate, ", %.0f %s/s", static_cast<double>(counted) / seconds,
                    count_unit_.c_str());
      line_ += rate;
    }
  }
  char time[32];
  std::snprintf(time, sizeof time, " %llu.%llus",
                static_cast<unsigned long long>(elapsed_ms / 1000),
                static_cast<unsigned long long>(elapsed_ms % 1000 / 100));
  line_ += time;
}

}  // namespace amem
