#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/progress.h"

using namespace amem;

namespace {

// Captures what progress writes: a tmpfile as the sink, read back after the
// Progress object is gone (its destructor joins the ticker).
class Capture {
 public:
  Capture() : file_(std::tmpfile()) { REQUIRE(file_ != nullptr); }
  ~Capture() {
    ConfigureProgress({});  // back to the default: off
    std::fclose(file_);
  }
  void Enable(uint32_t delay_ms, uint32_t interval_ms = 1) {
    ProgressConfig c;
    c.enabled = true;
    c.out = file_;
    c.delay_ms = delay_ms;
    c.interval_ms = interval_ms;
    ConfigureProgress(c);
  }
  std::string Text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string s;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) s.append(buf, n);
    return s;
  }

 private:
  std::FILE* file_;
};

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

TEST_CASE("Progress is off by default and on a non-terminal", "[common][progress]") {
  ConfigureProgress({});
  CHECK_FALSE(ProgressEnabled());
  EnableProgressOnTerminal(false);
  CHECK_FALSE(ProgressEnabled());
  EnableProgressOnTerminal(true);
  CHECK(ProgressEnabled());
  ConfigureProgress({});
  CHECK_FALSE(ProgressEnabled());

  Capture cap;  // configured off: a long operation writes nothing
  {
    Progress p("amem export");
    p.Stage("building", 10, "nodes");
    p.Advance(5);
    SleepMs(20);
  }
  CHECK(cap.Text().empty());
}

TEST_CASE("Progress draws stage, percentage and count, then erases the line",
          "[common][progress]") {
  Capture cap;
  cap.Enable(/*delay_ms=*/0);
  {
    Progress p("amem ingest");
    p.Stage("parsing", 200, "bytes");
    p.Advance(50);
    SleepMs(30);
  }
  std::string text = cap.Text();
  CHECK(text.find("\r\x1b[Kamem ingest: parsing 25% (50/200 bytes) ") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);  // redrawn in place, never scrolls
  REQUIRE(text.size() >= 4);
  CHECK(text.substr(text.size() - 4) == "\r\x1b[K");  // the command's output follows on a clean line
}

TEST_CASE("Progress without a total shows the stage and a count", "[common][progress]") {
  Capture cap;
  cap.Enable(0);
  {
    Progress p("consolidate");
    p.Stage("finding duplicates");
    SleepMs(20);
    p.Stage("scanning", 0, "pairs");
    p.Advance(7);
    SleepMs(20);
  }
  std::string text = cap.Text();
  CHECK(text.find("consolidate: finding duplicates ") != std::string::npos);
  CHECK(text.find("consolidate: scanning 7 pairs ") != std::string::npos);
  CHECK(text.find('%') == std::string::npos);
}

TEST_CASE("Progress says nothing about an operation shorter than the delay",
          "[common][progress]") {
  Capture cap;
  cap.Enable(/*delay_ms=*/60000);
  {
    Progress p("betweenness");
    p.Stage("Brandes", 200, "sources");
    p.Advance(200);
  }
  CHECK(cap.Text().empty());
}

TEST_CASE("Progress counts every Advance from many threads", "[common][progress]") {
  Capture cap;
  cap.Enable(0);
  {
    Progress p("betweenness");
    p.Stage("Brandes", 4000, "sources");
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
      pool.emplace_back([&p] {
        for (int i = 0; i < 1000; ++i) p.Advance();
      });
    }
    for (auto& th : pool) th.join();
    SleepMs(30);
  }
  CHECK(cap.Text().find("betweenness: Brandes 100% (4000/4000 sources) ") != std::string::npos);
}

TEST_CASE("Progress shows a second count and the rates once a second has passed",
          "[common][progress]") {
  Capture cap;
  cap.Enable(/*delay_ms=*/0, /*interval_ms=*/50);
  {
    Progress p("amem ingest");
    p.Stage("parsing", 4000000, "bytes", "lines");
    p.Advance(2000000);
    p.Count(1000);
    SleepMs(1200);
  }
  std::string text = cap.Text();
  CHECK(text.find("amem ingest: parsing 50% (2000000/4000000 bytes) 1000 lines ") !=
        std::string::npos);
  CHECK(text.find(" MB/s, ") != std::string::npos);
  CHECK(text.find(" lines/s ") != std::string::npos);
}
