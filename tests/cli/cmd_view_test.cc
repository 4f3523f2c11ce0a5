// amem view (tools/cli/cmd_view.cc, docs/VIEW.md): each format's golden output on the
// demo data, the same bytes on every run, hostile keys and contents that break no
// format, and bad input refused with a clear error that writes nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/amem_runner.h"
#include "tests/test_paths.h"

namespace amem::testing {
namespace {

const std::string kRoot = AMEM_SOURCE_DIR;

bool HaveProgram(const std::string& path) { return std::filesystem::exists(path); }

// The bytes between `open` and the next `close` in `text` ("" when absent).
std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  size_t a = text.find(open);
  if (a == std::string::npos) return "";
  a += open.size();
  size_t b = text.find(close, a);
  return b == std::string::npos ? "" : text.substr(a, b - a);
}

TEST_CASE("view writes each text format's golden output on the demo data", "[cli][view]") {
  TempStore s;
  IngestDemo(s);
  // To update after an intended change: the same commands on a store made as
  // IngestDemo makes it, redirected to tests/data/view/demo-*.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"view", "impact", "fact:lmdb-one-writer"}, "demo-impact.dot"},
      {{"view", "impact", "fact:lmdb-one-writer", "--format", "mermaid"}, "demo-impact.mmd"},
      {{"view", "traverse", "module:store", "--depth", "2", "--format", "graphml"},
       "demo-traverse.graphml"},
      {{"view", "--all", "--format", "mermaid", "--as-of", "3"}, "demo-all-rev3.mmd"},
  };
  for (const auto& [args, golden] : cases) {
    INFO(golden);
    RunResult r = s.Run(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == ReadFile(kRoot + "/tests/data/view/" + golden));
    CHECK(s.Run(args).out == r.out);  // the same bytes again
  }
}

TEST_CASE("view names the query, its arguments and the revision's commit time", "[cli][view]") {
  TempStore s;
  IngestDemo(s);
  RunResult r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--as-of", "2", "--format",
                       "graphml"});
  REQUIRE(r.exit_code == 0);
  // Revision 2 is the second ingest, committed at 1700000600.
  CHECK(r.out.find("<desc>amem view impact fact:lmdb-one-writer --as-of 2 (revision 2, "
                   "committed 2023-11-14T22:23:20Z)</desc>") != std::string::npos);
  // --snapshot reads a file: the header names it.
  RunResult e = s.Run({"export", s.dir().Sub("x.amem")});
  REQUIRE(e.exit_code == 0);
  r = s.Run({"view", "resolve", "fact:build-system", "--snapshot", s.dir().Sub("x.amem")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("(snapshot x.amem, newest write ") != std::string::npos);
  CHECK(r.out.find("correction:build-system") != std::string::npos);
  // A ranked answer draws its nodes with the edges among them.
  r = s.Run({"view", "text-search", "build", "--format", "graphml"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("<edge ") != std::string::npos);
}

TEST_CASE("view's page gives each node the revision of its last write, as of the view",
          "[cli][view]") {
  TempStore s;
  REQUIRE(s.Run({"put-node", "fact:a", "--type", "fact", "--content", "first"}).exit_code == 0);
  REQUIRE(s.Run({"put-node", "fact:b", "--type", "fact", "--content", "other"}).exit_code == 0);
  REQUIRE(s.Run({"put-edge", "fact:a", "supports", "fact:b"}).exit_code == 0);
  REQUIRE(s.Run({"put-node", "fact:a", "--type", "fact", "--content", "second"}).exit_code == 0);
  auto revisions = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "view");
    args.insert(args.end(), {"--out", s.dir().Sub("r.html")});
    RunResult r = s.Run(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string page = ReadFile(s.dir().Sub("r.html"));
    const auto data = nlohmann::json::parse(
        Between(page, "<script type=\"application/json\" id=\"amem-data\">", "</script>"));
    std::map<std::string, nlohmann::json> by_key;
    for (const auto& n : data["nodes"]) by_key[n["key"]] = n.contains("revision") ? n["revision"] : nullptr;
    return by_key;
  };
  using Map = std::map<std::string, nlohmann::json>;
  CHECK(revisions({"traverse", "fact:a"}) == Map{{"fact:a", 4}, {"fact:b", 2}});
  CHECK(revisions({"--all"}) == Map{{"fact:a", 4}, {"fact:b", 2}});
  // As of revision 3, fact:a's last write was the first one.
  CHECK(revisions({"traverse", "fact:a", "--as-of", "3"}) == Map{{"fact:a", 1}, {"fact:b", 2}});
  // A snapshot file holds no revisions: none is shown rather than a guess.
  REQUIRE(s.Run({"export", s.dir().Sub("x.amem")}).exit_code == 0);
  CHECK(revisions({"traverse", "fact:a", "--snapshot", s.dir().Sub("x.amem")}) ==
        Map{{"fact:a", nullptr}, {"fact:b", nullptr}});
}

TEST_CASE("view keeps hostile keys and contents text in every format", "[cli][view]") {
  TempStore s;
  REQUIRE(s.Run({"ingest", kRoot + "/tests/data/view/hostile.jsonl", "--ts", "1700000000"})
              .exit_code == 0);
  const std::string node = "fact:plain";
  const std::string script_key = "fact:</script><img src=x onerror=\"window.__pwned=1\">";
  const std::string odd_key = "decision:a\"b]c[d{e}-->f|g`h#i;j\\k\nl";

  SECTION("DOT: one statement a line, and Graphviz reads it") {
    RunResult r = s.Run({"view", "traverse", node, "--direction", "both"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("label=\"decision:a\\\"b]c[d{e}-->f|g`h#i;j\\\\k\\nl\\n(decision)\"") !=
          std::string::npos);
    if (HaveProgram("/usr/bin/dot")) {
      RunResult dot = RunProgram("/usr/bin/dot", {"-Tsvg"}, r.out, {}, "");
      INFO(dot.err);
      CHECK(dot.exit_code == 0);
      CHECK(dot.out.find("&lt;/script&gt;&lt;img") != std::string::npos);
    } else {
      FAIL("Graphviz's dot is missing (bash tools/bootstrap.sh test installs it)");
    }
  }
  SECTION("GraphML: an XML parser reads back each key exactly") {
    RunResult r = s.Run({"view", "traverse", node, "--direction", "both", "--format", "graphml"});
    REQUIRE(r.exit_code == 0);
    const std::string py =
        "import sys, json, xml.etree.ElementTree as E\n"
        "ns = {'g': 'http://graphml.graphdrawing.org/xmlns'}\n"
        "root = E.fromstring(sys.stdin.buffer.read())\n"
        "keys = sorted(d.text for d in root.iterfind('.//g:node/g:data[@key=\"key\"]', ns))\n"
        "print(json.dumps({'keys': keys, 'edges': len(root.findall('.//g:edge', ns))}))\n";
    RunResult p = RunProgram("/usr/bin/python3", {"-c", py}, r.out, {}, "");
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    const auto parsed = nlohmann::json::parse(p.out);
    CHECK(parsed["keys"] == nlohmann::json({odd_key, script_key, node}));
    CHECK(parsed["edges"] == 2);
  }
  SECTION("Mermaid: every label stays inside its quotes") {
    RunResult r = s.Run({"view", "traverse", node, "--direction", "both", "--format", "mermaid"});
    REQUIRE(r.exit_code == 0);
    size_t lines = 0;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      ++lines;
      if (line.rfind("  n", 0) != 0) continue;
      // Node: n1["..."]; edge: n1 -->|"..."| n2. Exactly two quotes, no markup.
      CHECK(std::count(line.begin(), line.end(), '"') == 2);
      CHECK(line.find('<', line.find("<br/>") == std::string::npos ? 0 : line.find("<br/>") + 1) ==
            std::string::npos);
    }
    CHECK(lines == 13);  // 4 header lines, 3 nodes, 2 edges, 2 types x 2 class lines
    CHECK(r.out.find("#quot;") != std::string::npos);
  }
  SECTION("HTML: the data block closes only where it ends, and reads back exactly") {
    RunResult r = s.Run({"view", "traverse", node, "--direction", "both", "--out",
                         s.dir().Sub("h.html")});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string page = ReadFile(s.dir().Sub("h.html"));
    const std::string block =
        Between(page, "<script type=\"application/json\" id=\"amem-data\">", "</script>");
    REQUIRE(!block.empty());
    for (const char* bad : {"<", ">", "&", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
      CHECK(block.find(bad) == std::string::npos);
    }
    const auto data = nlohmann::json::parse(block);
    std::vector<std::string> keys;
    for (const auto& n : data["nodes"]) keys.push_back(n["key"]);
    std::sort(keys.begin(), keys.end());
    CHECK(keys == std::vector<std::string>{odd_key, script_key, node});
    bool content_kept = false;
    for (const auto& n : data["nodes"]) {
      content_kept |= n["content"].get<std::string>().find("</script><script>") == 0;
    }
    CHECK(content_kept);
    CHECK(page.find("Content-Security-Policy\" content=\"default-src 'none'; script-src "
                    "'unsafe-inline'; style-src 'unsafe-inline'\"") != std::string::npos);
    // Nothing to load: no link, image, external script, import or url().
    for (const char* load : {"<link", "<img", "src=\"", "@import", "url("}) {
      CHECK(page.find(load) == std::string::npos);
    }
  }
}

TEST_CASE("view refuses bad input with a clear error and writes nothing", "[cli][view]") {
  TempStore s;
  IngestDemo(s);
  const std::string out = s.dir().Sub("v.html");
  RunResult r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--format", "png", "--out", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown format 'png'; choose html, dot, mermaid or graphml") !=
        std::string::npos);
  r = s.Run({"view", "nosuch", "x"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown query 'nosuch'; view draws one of traverse,") != std::string::npos);
  r = s.Run({"view", "consolidate"});  // it writes: not a view
  CHECK(r.exit_code == 2);
  r = s.Run({"view"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("name a query") != std::string::npos);
  r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--out", s.dir().path()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is a directory") != std::string::npos);
  r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--out", s.dir().Sub("no/such/v.dot")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("does not exist") != std::string::npos);
  r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--out", s.store() + "/v.html"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("inside the store directory") != std::string::npos);
  r = s.Run({"view", "impact", "fact:no-such-node", "--out", out});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("fact:no-such-node") != std::string::npos);
  r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--out", std::string("a\nb.html")});
  CHECK(r.exit_code == 2);
  CHECK(!std::filesystem::exists(out));
  // The format follows --out: .html is a page; otherwise DOT.
  r = s.Run({"view", "impact", "fact:lmdb-one-writer", "--out", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "wrote " + out + " (html, 2 nodes, 1 edges)\n");
  CHECK(ReadFile(out).rfind("<!DOCTYPE html>", 0) == 0);
  r = s.Run({"view", "impact", "fact:lmdb-one-writer"});
  CHECK(r.out.rfind("digraph amem {", 0) == 0);
}

TEST_CASE("view --all draws a small store and refuses a large one", "[cli][view]") {
  TempStore s;
  std::string lines;
  for (int i = 0; i <= 2000; ++i) {
    lines += "{\"op\":\"node\",\"key\":\"fact:n" + std::to_string(i) +
             "\",\"type\":\"fact\",\"content\":\"x\"}\n";
  }
  REQUIRE(s.Run({"ingest", "-"}, lines).exit_code == 0);
  RunResult r = s.Run({"view", "--all", "--as-of", "0"});
  CHECK(r.exit_code == 0);
  r = s.Run({"view", "--all", "--format", "mermaid"});
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("view --all draws at most 2000 nodes and 10000 edges; this snapshot has "
                   "2001 nodes") != std::string::npos);
}

}  // namespace
}  // namespace amem::testing
