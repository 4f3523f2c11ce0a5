// `amem import|info|verify` on files written by AgenticMemory's own tool, through
// the real binary: good files (v1, v0.1, empty), re-import, directories, damaged
// files, a dimension mismatch, and a round trip through `amem export`.
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>

#include "common/coding.h"
#include "common/model.h"
#include "snapshot/agentic_memory.h"
#include "snapshot/reader.h"
#include "tests/snapshot/agentic_memory_writer.h"
#include "tests/cli/amem_runner.h"
#include "tests/test_paths.h"

namespace amem::testing {
namespace {

namespace aw = amem::agentic_test;
namespace ag = amem::snapshot::agentic;

void RequireRun(const RunResult& r, int code = 0) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == code);
}

// One error line on stderr, nothing on stdout, the exit code, and the message has
// every one of `parts`.
void RequireFails(const RunResult& r, int code, std::initializer_list<std::string> parts) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err_lines() == 1);
  CHECK(r.out.empty());
  for (const std::string& p : parts) CHECK(r.err.find(p) != std::string::npos);
}

std::string WriteSample(const TempStore& s, const std::string& name, const aw::Graph& g) {
  std::string path = s.dir() / name;
  WriteFile(path, aw::Write(g));
  return path;
}

}  // namespace

TEST_CASE("amem import reads an AgenticMemory file and a re-import writes nothing",
          "[agentic][tools]") {
  TempStore s(4);
  aw::Graph g = aw::SampleGraph();
  g.lz4_matches = true;
  const std::string file = WriteSample(s, "project.amem", g);
  RunResult r = s.Run({"import", file});
  RequireRun(r);
  CHECK(r.out == "imported " + file +
                     " (AgenticMemory, format version 1) as agentic:project/: 9 nodes (9 "
                     "written), 8 edges (8 written), 3 sessions, 5 vectors; store at "
                     "revision 1\n");
  const std::string stats = s.Stats();

  r = s.Run({"import", file});
  RequireRun(r);
  CHECK(r.out.find("9 nodes (0 written), 8 edges (0 written)") != std::string::npos);
  CHECK(r.out.find("store at revision 1") != std::string::npos);
  CHECK(s.Stats() == stats);

  // A changed node is written again, and nothing else.
  g.nodes[3].access_count = 99;
  WriteFile(file, aw::Write(g));
  r = s.Run({"import", file, "--json"});
  RequireRun(r);
  nlohmann::json j = r.json();
  CHECK(j["format"] == "agentic-memory");
  CHECK(j["nodes_written"] == 1);
  CHECK(j["edges_written"] == 0);
  CHECK(j["revision"] == 2);
}

TEST_CASE("AgenticMemory import round trip through amem export", "[agentic][tools]") {
  TempStore s(4);
  aw::Graph g = aw::SampleGraph();
  const std::string file = WriteSample(s, "p.amem", g);
  RequireRun(s.Run({"import", file, "--name", "proj"}));
  const std::string out = s.dir() / "out.amem";
  RequireRun(s.Run({"export", out}));
  auto opened = snapshot::Reader::Open(out);
  REQUIRE(opened.ok());
  const snapshot::Reader& rd = **opened;
  REQUIRE(rd.EnsureContent().ok());
  CHECK(rd.node_count() == g.nodes.size());
  for (const aw::Node& n : g.nodes) {
    auto i = rd.FindKey("agentic:proj/" + std::to_string(n.id));
    REQUIRE(i.has_value());
    CHECK(rd.content(*i) == n.content);
    CHECK(static_cast<int>(rd.type(*i)) == n.event_type);
    CHECK(rd.run(*i) == "agentic:proj/session-" + std::to_string(n.session));
    CHECK(rd.confidence(*i) == n.confidence);
    CHECK(rd.created_ts(*i) == static_cast<int64_t>(n.created_at / 1000000));
    nlohmann::json meta = nlohmann::json::parse(rd.meta(*i));
    CHECK(meta["created_at_us"] == std::to_string(n.created_at));
    CHECK(meta["access_count"] == std::to_string(n.access_count));
    CHECK(meta["last_accessed_us"] == std::to_string(n.last_accessed));
    CHECK(std::stof(meta["decay_score"].get<std::string>()) == n.decay_score);
    const float* v = rd.vector(*i);
    CHECK((v != nullptr) == !n.vector.empty());
    if (v) CHECK(std::vector<float>(v, v + 4) == n.vector);
  }
  CHECK(rd.edge_count() == g.edges.size());
  for (const aw::Edge& e : g.edges) {
    auto src = rd.FindKey("agentic:proj/" + std::to_string(e.source));
    auto dst = rd.FindKey("agentic:proj/" + std::to_string(e.target));
    REQUIRE((src && dst));
    auto j = rd.FindEdge(*src, e.edge_type, *dst);
    REQUIRE(j.has_value());
    CHECK(rd.relation_name(rd.edge_rel(*j)) == BuiltinRelationName(e.edge_type));
    CHECK(rd.edge_weight(*j) == e.weight);
    CHECK(rd.edge_created_ts(*j) == static_cast<int64_t>(e.created_at / 1000000));
    CHECK(nlohmann::json::parse(rd.edge_payload(*j))["created_at_us"] ==
          std::to_string(e.created_at));
  }
}

TEST_CASE("amem import reads v0.1 files and empty graphs", "[agentic][tools]") {
  TempStore s(4);
  const std::string old = WriteSample(s, "old.amem", aw::SampleGraph(0));
  RunResult r = s.Run({"import", old});
  RequireRun(r);
  CHECK(r.out.find("(AgenticMemory, format version 0) as agentic:old/: 9 nodes (9 written)") !=
        std::string::npos);
  const std::string empty =
      std::string(AMEM_SOURCE_DIR) + "/tests/data/agentic_memory/v1_empty.amem";
  r = s.Run({"import", empty});
  RequireRun(r);
  CHECK(r.out.find("as agentic:v1_empty/: 0 nodes (0 written), 0 edges (0 written), 0 "
                   "sessions, 0 vectors; store at revision 1") != std::string::npos);
}

TEST_CASE("amem import of a directory imports each AgenticMemory file", "[agentic][tools]") {
  TempStore s(4);
  const std::string dir = s.dir() / "agentic";
  std::filesystem::create_directory(dir);
  WriteFile(dir + "/alpha.amem", aw::Write(aw::SampleGraph(1)));
  WriteFile(dir + "/beta.amem", aw::Write(aw::SampleGraph(0)));
  WriteFile(dir + "/notes.txt", "not a snapshot\n");
  const std::string small = std::string(AMEM_SOURCE_DIR) + "/tests/data/small.amem";
  WriteFile(dir + "/own.amem", ReadFile(small));
  RunResult r = s.Run({"import", dir});
  RequireRun(r);
  CHECK(r.out.find("imported " + dir + "/alpha.amem (AgenticMemory, format version 1) as "
                   "agentic:alpha/: 9 nodes (9 written)") != std::string::npos);
  CHECK(r.out.find("as agentic:beta/: 9 nodes (9 written)") != std::string::npos);
  CHECK(r.out.find("skipped " + dir + "/notes.txt: not a snapshot") != std::string::npos);
  CHECK(r.out.find("skipped " + dir + "/own.amem: an amem snapshot") != std::string::npos);
  r = s.Run({"import", dir, "--json"});
  RequireRun(r);
  nlohmann::json j = r.json();
  CHECK(j["imported"].size() == 2);
  CHECK(j["imported"][0]["nodes_written"] == 0);
  CHECK(j["skipped"].size() == 2);

  // One damaged file: nothing of the directory is written.
  TempStore t(4);
  std::string bad = aw::Write(aw::SampleGraph());
  bad[ag::kHeaderLength + ag::NodeLayout::kEventType] = 7;
  WriteFile(dir + "/gamma.amem", bad);
  const std::string before = t.Stats();
  RequireFails(t.Run({"import", dir}), 5, {"gamma.amem", "node record 0", "event type 7"});
  CHECK(t.Stats() == before);
  RequireFails(t.Run({"import", dir, "--name", "x"}), 2, {"--name"});
}

TEST_CASE("amem import rejects damaged AgenticMemory files and writes nothing",
          "[agentic][tools][corruption]") {
  TempStore s(4);
  aw::Graph g = aw::SampleGraph();
  const std::string good = aw::Write(g);
  const size_t edges = ag::kHeaderLength + g.nodes.size() * ag::kNodeRecordLength;
  const uint64_t content = DecodeFixed64(good.data() + ag::HeaderLayout::kContent);
  struct Damage {
    const char* what;
    std::function<void(std::string*)> apply;
    std::string expect;
  };
  std::vector<Damage> damages = {
      {"event type", [](std::string* b) { (*b)[ag::kHeaderLength + 8] = 6; },
       "node record 0 (id 0, byte 72)"},
      {"edge type", [&](std::string* b) { (*b)[edges + 16] = 9; }, "unknown edge type 9"},
      {"missing node", [&](std::string* b) { (*b)[edges + 8] = 50; },
       "target id 50 is not a node"},
      {"utf-8", [&](std::string* b) { (*b)[content + 6] = static_cast<char>(0xC0); },
       "not valid UTF-8"},
      {"4 GiB prefix", [&](std::string* b) { EncodeFixed32(b->data() + content, 0xFFFFFFFF); },
       "size prefix 4294967295"},
      {"huge node count",
       [](std::string* b) { EncodeFixed64(b->data() + ag::HeaderLayout::kNodeCount, 1ull << 40); },
       "node count"},
      {"huge edge count",
       [](std::string* b) { EncodeFixed64(b->data() + ag::HeaderLayout::kEdgeCount, 1ull << 60); },
       "edge count"},
      {"cut", [](std::string* b) { b->resize(b->size() - 3); }, "index block"},
      {"cut in content", [&](std::string* b) { b->resize(content + 10); }, "header"},
  };
  const std::string before = s.Stats();
  for (const Damage& d : damages) {
    INFO(d.what);
    std::string bytes = good;
    d.apply(&bytes);
    const std::string path = s.dir() / "bad.amem";
    WriteFile(path, bytes);
    RequireFails(s.Run({"import", path}), 5, {"amem import: ", "bad.amem", d.expect});
    RequireFails(s.Run({"info", path}), 5, {d.expect});
    RequireFails(s.Run({"verify", path}), 5, {d.expect});
    CHECK(s.Stats() == before);
  }
}

TEST_CASE("amem import: dimension mismatch, --from and --name", "[agentic][tools]") {
  TempStore s(8);
  const std::string file = WriteSample(s, "vec.amem", aw::SampleGraph(1, 4));
  const std::string before = s.Stats();
  RequireFails(s.Run({"import", file}), 4, {"dimension 4", "dimension is 8"});
  CHECK(s.Stats() == before);

  // Zero vectors only: any store dimension fits.
  aw::Graph plain = aw::SampleGraph(1, 128);
  for (aw::Node& n : plain.nodes) n.vector.clear();
  const std::string novec = WriteSample(s, "novec.amem", plain);
  RunResult r = s.Run({"import", novec, "--from", "agentic-memory", "--name", "mine"});
  RequireRun(r);
  CHECK(r.out.find("as agentic:mine/: 9 nodes (9 written)") != std::string::npos);
  CHECK(r.out.find(", 0 vectors;") != std::string::npos);
  RequireRun(s.Run({"get-node", "agentic:mine/4"}));
  const std::string imported = s.Stats();

  // Forcing amem's own layout on such a file fails as amem's reader does.
  r = s.Run({"import", novec, "--from", "amem"});
  CHECK(r.exit_code == 5);
  RequireFails(s.Run({"import", novec, "--name", "a/b"}), 4, {"'/'"});
  r = s.Run({"import", novec, "--from", "other"});
  CHECK(r.exit_code == 2);
  // And the other way round: amem's own snapshot is not an AgenticMemory file.
  const std::string small = std::string(AMEM_SOURCE_DIR) + "/tests/data/small.amem";
  r = s.Run({"import", small, "--from", "agentic-memory"});
  CHECK((r.exit_code == 5 || r.exit_code == 7));
  CHECK(r.err.find("AgenticMemory") != std::string::npos);
  CHECK(s.Stats() == imported);
  // amem's own snapshots are still described as before.
  r = s.Run({"info", small});
  RequireRun(r);
  CHECK(r.out.find("AgenticMemory") == std::string::npos);
}

TEST_CASE("amem info and verify describe an AgenticMemory file", "[agentic][tools]") {
  TempStore s(4);
  const std::string file = WriteSample(s, "project.amem", aw::SampleGraph());
  RunResult r = s.Run({"info", file});
  RequireRun(r);
  CHECK(r.out.find("format: AgenticMemory") != std::string::npos);
  CHECK(r.out.find("version: 1") != std::string::npos);
  CHECK(r.out.find("nodes: 9") != std::string::npos);
  CHECK(r.out.find("edges: 8") != std::string::npos);
  CHECK(r.out.find("import with: amem import " + file) != std::string::npos);
  r = s.Run({"info", file, "--json"});
  RequireRun(r);
  CHECK(r.json()["format"] == "agentic-memory");
  CHECK(r.json()["sessions"] == 3);
  r = s.Run({"verify", file});
  RequireRun(r);
  CHECK(r.out.find("an AgenticMemory file (format version 1, 9 nodes, 8 edges)") !=
        std::string::npos);
  CHECK(r.out.find("amem import " + file) != std::string::npos);
  const std::string empty =
      std::string(AMEM_SOURCE_DIR) + "/tests/data/agentic_memory/v1_empty.amem";
  r = s.Run({"info", empty});
  RequireRun(r);
  CHECK(r.out.find("nodes: 0") != std::string::npos);
  RequireRun(s.Run({"verify", empty}));
}

}  // namespace amem::testing
