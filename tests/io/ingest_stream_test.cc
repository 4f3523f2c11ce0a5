// The streamed ingest: the simdjson fast path against the reference parser, exact
// numbers, pieces of operations applied as one revision, all or nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <random>

#include "tests/store/store_test_util.h"
#include "tests/cli/amem_runner.h"
#include "tools/io/ingest.h"
#include "tools/io/ingest_line.h"

namespace amem::testing {
namespace {

using io::FastLineParser;
using io::IngestReader;

// Every field of an operation, as text, to compare two parsers' batches.
std::string Describe(const Batch::Op& op) {
  std::string out = std::to_string(static_cast<int>(op.kind)) + "|";
  auto opt = [](const auto& o) {
    if (!o) return std::string("-");
    if constexpr (std::is_same_v<std::decay_t<decltype(*o)>, std::string>) {
      return "s:" + *o;
    } else {
      return "i:" + std::to_string(*o);
    }
  };
  if (const auto* n = std::get_if<NodeInput>(&op.input)) {
    out += n->key + "|" + std::to_string(static_cast<int>(n->type)) + "|" + n->content + "|" +
           n->meta + "|";
    uint32_t bits;
    std::memcpy(&bits, &n->confidence, 4);
    out += std::to_string(bits) + "|";
    for (float f : n->vector) {
      std::memcpy(&bits, &f, 4);
      out += std::to_string(bits) + ",";
    }
    out += "|" + opt(n->ts) + opt(n->run) + opt(n->task) + opt(n->scope);
  } else if (const auto* e = std::get_if<EdgeInput>(&op.input)) {
    uint32_t bits;
    std::memcpy(&bits, &e->weight, 4);
    out += e->src + "|" + e->rel + "|" + e->dst + "|" + std::to_string(bits) + "|" +
           e->payload + "|" + opt(e->ts) + opt(e->run) + opt(e->task);
  } else if (const auto* k = std::get_if<KvInput>(&op.input)) {
    out += k->scope + "|" + k->ns + "|" + k->key + "|" + k->value + "|" + opt(k->ts) +
           opt(k->run) + opt(k->task);
  }
  return out;
}

// Parses `line` with the fast path (padded) and with the reference parser. Returns
// what the fast path made, or "declined".
std::string Fast(const std::string& line) {
  std::string padded = line + std::string(io::kLinePadding, ' ');
  FastLineParser parser;
  Batch batch;
  if (!parser.Add(padded.data(), line.size(), &batch)) {
    CHECK(batch.empty());
    return "declined";
  }
  REQUIRE(batch.size() == 1);
  return Describe(batch.ops()[0]);
}

std::string Reference(const std::string& line) {
  Batch batch;
  Status s = io::AddIngestLine(line, &batch);
  if (!s.ok()) return "error: " + s.message();
  return Describe(batch.ops()[0]);
}

TEST_CASE("the fast line parser makes what the reference parser makes",
          "[tools][ingest][stream]") {
  const std::vector<std::string> accepted = {
      R"({"op":"node","key":"file:a","type":"file","content":"x\n\"y\" \u00e9 \ud83d\ude00","meta":{"b":"2","a":"1"},"confidence":0.1,"vector":[1,-0,0.30000000000000004,1e-3,1E+2,-2.5e-7,123456789012,3.4028234663852886e38],"ts":9007199254740993,"run":"r","task":"t","scope":"s"})",
      R"({"op":"node","key":"k","type":"fact","ts":-0,"confidence":-0,"vector":[-0.0,-0,0e-5]})",
      R"( {"type":"decision","op":"node","key":"k"} )",
      R"({"op":"node","key":"k","type":"fact","meta":{"a":{"b":[1,2.50,{"c":null}]},"a":"last"}})",
      R"({"op":"edge","src":"a","rel":"calls","dst":"b","weight":-1.5e3,"payload":{"z":[1.0,2],"a":{}}})",
      R"({"op":"edge","src":"a","rel":"calls","dst":"b","payload":[true,false,null,"s"],"scope":"x"})",
      R"({"op":"kv","scope":"s","ns":"decisions","key":"k","value":"plain"})",
      R"({"op":"kv","scope":"s","ns":"decisions","key":"k","value":{"why":"fast","n":1e2}})",
      R"({"op":"kv","scope":"s","ns":"n","key":"k","value":[1,"two"],"ts":5})",
      R"({"op":"del_node","key":"k","scope":"s","run":"r"})",
      R"({"op":"del_edge","src":"a","rel":"calls","dst":"b","task":"t"})",
      R"({"op":"del_kv","scope":"s","ns":"n","key":"k"})",
      R"({"op":"rel","name":"blocks","run":"r"})",
      R"({"o\u0070":"node","key":"k","type":"fact"})",
      // Empty meta and payload (taken as they are) and ones with spaces (canonicalized).
      R"({"op":"node","key":"k","type":"fact","meta":{}})",
      R"({"op":"node","key":"k","type":"fact","meta":{ }})",
      R"({"op":"edge","src":"a","rel":"calls","dst":"b","payload":[]})",
      R"({"op":"edge","src":"a","rel":"calls","dst":"b","payload":[ ]})",
      R"({"op":"kv","scope":"s","ns":"n","key":"k","value":{}})",
  };
  for (const std::string& line : accepted) {
    INFO(line);
    std::string ref = Reference(line);
    CHECK(ref.rfind("error", 0) != 0);
    CHECK(Fast(line) == ref);
  }
  // Lines the reference parser rejects: the fast path declines every one, so the
  // reference parser names the error.
  const std::vector<std::string> rejected = {
      R"({"op":"node","key":"a","type":"fact")",
      R"({"op":"node","key":"a","type":"fact"} x)",
      R"({"op":"node","key":"a","type":"fact"}{})",
      R"([1,2])",
      R"("node")",
      R"({"op":"node","key":"a","key":"b","type":"fact"})",
      R"({"op":"node","key":"a","type":"fact","bogus":1})",
      R"({"op":"edge","src":"a","rel":"calls","dst":"b","type":"fact"})",
      R"({"op":"node","key":"a","type":"fact","confidence":1e999})",
      R"({"op":"node","key":"a","type":"fact","confidence":-1e400})",
      R"({"op":"node","key":"a","type":"fact","confidence":1e300})",
      R"({"op":"node","key":"a","type":"fact","vector":[1,1e39]})",
      R"({"op":"node","key":"a","type":"fact","vector":[1,null]})",
      R"({"op":"node","key":"a","type":"fact","vector":[1,NaN]})",
      R"({"op":"node","key":"a","type":"fact","confidence":Infinity})",
      R"({"op":"node","key":"a","type":"fact","ts":1.0})",
      R"({"op":"node","key":"a","type":"fact","ts":1e3})",
      R"({"op":"node","key":"a","type":"fact","ts":9223372036854775808})",
      R"({"op":"node","key":"a","type":"fact","ts":18446744073709551616})",
      R"({"op":"node","key":"a","type":"fact","content":"\ud800"})",
      R"({"op":"node","key":"a","type":"fact","content":"tab	inside"})",
      "{\"op\":\"node\",\"key\":\"\xff\",\"type\":\"fact\"}",
      "{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"content\":\"\xc3\x28\"}",
      R"({"op":"node","key":"a","type":"fact","meta":"x"})",
      R"({"op":"node","key":"a","type":"fact","meta":{"a":1e999}})",
      R"({"op":"node","key":"a","type":"factoid"})",
      R"({"op":"kv","scope":"s","ns":"n","key":"k","value":3})",
      R"({"op":"kv","ns":"n","key":"k","value":"v"})",
      R"({"op":"rel"})",
      R"({"op":7})",
      R"({"key":"a"})",
      R"({"op":"node","key":"a","type":"fact","confidence":01})",
  };
  for (const std::string& line : rejected) {
    INFO(line);
    CHECK(Reference(line).rfind("error: ", 0) == 0);
    CHECK(Fast(line) == "declined");
  }
  // Nesting: 64 levels is the limit for the whole line, the line's object included.
  auto nested = [](int depth) {
    std::string v = std::string(depth, '[') + std::string(depth, ']');
    return R"({"op":"edge","src":"a","rel":"calls","dst":"b","payload":)" + v + "}";
  };
  CHECK(Fast(nested(63)) == Reference(nested(63)));
  CHECK(Reference(nested(64)).find("nested deeper than 64 levels") != std::string::npos);
  CHECK(Fast(nested(64)) == "declined");
}

TEST_CASE("the fast line parser forgets the previous line", "[tools][ingest][stream]") {
  const std::string first =
      R"({"op":"node","key":"a","type":"fact","content":"first's","meta":{"m":"1"},"run":"r"})";
  const std::string second = R"({"op":"node","key":"b","type":"fact"})";
  std::string text = first + "\n" + second + "\n";
  text.append(io::kLinePadding, ' ');
  FastLineParser parser;
  Batch batch;
  REQUIRE(parser.Add(text.data(), first.size(), &batch));
  REQUIRE(parser.Add(text.data() + first.size() + 1, second.size(), &batch));
  const NodeInput& b = batch.ops()[1].node();
  CHECK(b.content.empty());
  CHECK(b.meta == "{}");
  CHECK_FALSE(b.run.has_value());
  CHECK(Describe(batch.ops()[1]) == Reference(second));
}

TEST_CASE("ingest numbers are exact", "[tools][ingest][stream]") {
  Result<io::IngestBatch> r = io::ParseIngest(
      R"({"op":"node","key":"a","type":"fact","confidence":0.1,"ts":9223372036854775807,)"
      R"("vector":[0.1,-0,1e-45,16777217,3.4028234663852886e38,-1.5E-3,-0.0,-0e0]})"
      "\n"
      R"({"op":"edge","src":"a","rel":"calls","dst":"b","weight":0.30000000000000004,"ts":-9223372036854775808})");
  REQUIRE(r.ok());
  const NodeInput& n = r->batch.ops()[0].node();
  CHECK(n.confidence == static_cast<float>(0.1));
  CHECK(n.ts == std::numeric_limits<int64_t>::max());
  REQUIRE(n.vector.size() == 8);
  CHECK(n.vector[0] == static_cast<float>(0.1));
  CHECK(n.vector[1] == 0.0f);
  CHECK_FALSE(std::signbit(n.vector[1]));  // an integer literal, as the reference reads it
  CHECK(std::signbit(n.vector[6]));
  CHECK(std::signbit(n.vector[7]));
  CHECK(n.vector[2] == static_cast<float>(1e-45));
  CHECK(n.vector[3] == 16777216.0f);  // the nearest f32, by way of the exact double
  CHECK(n.vector[4] == std::numeric_limits<float>::max());
  CHECK(n.vector[5] == static_cast<float>(-1.5e-3));
  const EdgeInput& e = r->batch.ops()[1].edge();
  CHECK(e.weight == static_cast<float>(0.30000000000000004));
  CHECK(e.ts == std::numeric_limits<int64_t>::min());
  CHECK(io::ParseIngest(R"({"op":"node","key":"a","type":"fact","vector":[1e999]})")
            .status()
            .message()
            .find("line 1: malformed JSON: number overflow") == 0);
}

// The fast path reads a vector's numbers from the array's text (VectorText in
// ingest_line.cc); every float must be the reference parser's, bit for bit, and
// every vector the reference rejects must be declined.
TEST_CASE("vector numbers read from the text are the reference parser's",
          "[tools][ingest][stream]") {
  auto line = [](const std::string& vector) {
    return R"({"op":"node","key":"k","type":"fact","vector":)" + vector + R"(,"content":"c"})";
  };
  // Accepted by both: the fast path must take them (not decline) and agree.
  const std::vector<std::string> accepted = {
      "[]", "[ ]", "[ 1 , 2 ]", "[\n1,\t2\r]", "[0]", "[-0]", "[-0.0]", "[-0e0]", "[0.0e-0]",
      "[9007199254740992]", "[9007199254740993]", "[-9007199254740993.0]",
      "[123456789012345678]", "[1234567890123456789]", "[12345678901234567890]",
      "[0.30000000000000004]", "[0.1]", "[0.12345678]", "[0.123456789]", "[12345678.9]",
      "[1e22]", "[1e23]", "[1e-22]", "[1e-23]", "[1E+2]", "[1e0005]", "[0.000000000000000000001234]",
      "[2.2250738585072014e-308]", "[1e-46]", "[1.4e-45]",
      "[9007199254740992e22]", "[9007199254740992e-22]", "[9007199254740993e-1]",
      "[123.456e-20]", "[0.0000000000000000000001e22]", "[1e-45]", "[-1.5e-40]",
      "[3.4028234663852886e38]", "[-3.4028234663852886e38]", "[340282346638528859811704183484516925440]",
      "[0.14355469,-0.49169922,-0.095947266,0.0063476562,-0.009765625]",
  };
  for (const std::string& v : accepted) {
    INFO(v);
    const std::string ref = Reference(line(v));
    REQUIRE(ref.rfind("error", 0) != 0);
    CHECK(Fast(line(v)) == ref);
  }
  // The array's text as raw_json() gives it runs to the next token: whitespace
  // after the bracket is still the fast path's.
  for (const char* text :
       {R"({"op":"node","key":"k","type":"fact","vector":[1,2] ,"content":"c"})",
        R"({"op":"node","key":"k","type":"fact","vector": [1, 2] })",
        "{\"op\":\"node\",\"key\":\"k\",\"type\":\"fact\",\"vector\":[1]\t\r\n }"}) {
    INFO(text);
    CHECK(Fast(text) == Reference(text));
    CHECK(Fast(text) != "declined");
  }
  // Accepted by the reference but outside what the fast path reads exactly
  // (subnormal doubles, underflow to zero): declined or the same.
  for (const std::string v : {"[4.9406564584124654e-324]", "[2e-324]", "[1e-400]", "[-1e-400]"}) {
    INFO(v);
    const std::string ref = Reference(line(v));
    REQUIRE(ref.rfind("error", 0) != 0);
    const std::string fast = Fast(line(v));
    CHECK((fast == "declined" || fast == ref));
  }
  // Rejected by the reference parser: declined.
  const std::vector<std::string> rejected = {
      "[1,]", "[,1]", "[01]", "[-01]", "[1.]", "[.5]", "[+1]", "[1e]", "[1e+]", "[-]", "[1 2]",
      "[[1]]", R"(["1"])", "[true]", "[null]", "[1.e5]", "[0x10]", "[1,,2]", "[Infinity]",
      "[-NaN]", "[1e39]", "[-3.5e38]", "[3.4028235677973366e38]", "[1e400]", "[1, {}]", "[- 1]",
      "[1:2]", "[12345678:9]", "[0.5:]", "[1/2]", "[12345678\xc2\xa0]", "[1,2}",
  };
  for (const std::string& v : rejected) {
    INFO(v);
    CHECK(Reference(line(v)).rfind("error: ", 0) == 0);
    CHECK(Fast(line(v)) == "declined");
  }
  // Numbers of every shape, at random (a fixed seed): either both read the same
  // floats or the reference rejects the vector and the fast path declines it.
  std::mt19937_64 random(20261127);
  auto digits = [&](int n, bool nonzero_first) {
    std::string out;
    for (int i = 0; i < n; ++i) {
      out += static_cast<char>('0' + (i == 0 && nonzero_first ? 1 + random() % 9 : random() % 10));
    }
    return out;
  };
  int taken = 0, declined = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string v = "[";
    for (int i = 0; i < 8; ++i) {
      if (i > 0) v += ",";
      if (random() % 2) v += "-";
      v += random() % 4 == 0 ? "0" : digits(1 + random() % 22, true);
      if (random() % 3) {
        const int zeros = random() % 4 == 0 ? random() % 12 : 0;  // 0.000ddd
        v += "." + std::string(zeros, '0') + digits(1 + random() % 24, false);
      }
      if (random() % 3 == 0) {
        v += random() % 2 ? "e" : "E";
        const int sign = random() % 3;
        v += sign == 0 ? "" : sign == 1 ? "+" : "-";
        v += std::to_string(random() % 60);
      }
    }
    v += "]";
    INFO(v);
    const std::string ref = Reference(line(v));
    const std::string fast = Fast(line(v));
    if (ref.rfind("error: ", 0) == 0) {
      CHECK(fast == "declined");
      ++declined;
    } else {
      CHECK(fast == ref);
      ++taken;
    }
  }
  // Both kinds were tried.
  CHECK(taken > 500);
  CHECK(declined > 200);
}

// n nodes, each followed by an edge to the node before; every 7th, an edge to the
// node after (a forward reference); every 11th, a delete of an earlier node.
std::string Workload(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string k = "fact:" + std::to_string(i);
    text += R"({"op":"node","key":")" + k + R"(","type":"fact","content":"c)" +
            std::to_string(i) + R"(","vector":[1,2,3,)" + std::to_string(i) + "]}\n";
    if (i > 0) {
      text += R"({"op":"edge","src":")" + k + R"(","rel":"supports","dst":"fact:)" +
              std::to_string(i - 1) + "\"}\n";
    }
    if (i % 7 == 0) {
      text += R"({"op":"edge","src":")" + k + R"(","rel":"calls","dst":"fact:)" +
              std::to_string(i + 1) + "\"}\n\n";
    }
    if (i % 11 == 10) text += R"({"op":"del_node","key":"fact:)" + std::to_string(i - 3) + "\"}\n";
  }
  return text;
}

std::string ChangesText(Store* store) {
  Result<std::vector<Change>> changes = store->ChangesSinceRevision(0);
  REQUIRE(changes.ok());
  std::string out;
  for (const Change& c : *changes) {
    out += std::to_string(c.rev) + " " + ChangeKindName(c.kind) + " " + c.key + c.src_key +
           c.rel_name + c.dst_key + (c.overwrite ? " o" : "") + (c.src_missing ? " s" : "") +
           (c.dst_missing ? " d" : "") + "\n";
  }
  return out;
}

// Forwards to a stream, counting its rewinds, with `hint` as its SizeHint (0 by
// default: the map is then grown only when a write fills it, which reruns the
// write from the stream's start).
class Counted : public BatchStream {
 public:
  explicit Counted(BatchStream* stream, uint64_t hint = 0) : stream_(stream), hint_(hint) {}
  Status Rewind() override {
    ++rewinds_;
    return stream_->Rewind();
  }
  Result<bool> Next(Batch* piece) override { return stream_->Next(piece); }
  uint64_t SizeHint() const override { return hint_; }
  int rewinds() const { return rewinds_; }

 private:
  BatchStream* stream_;
  uint64_t hint_;
  int rewinds_ = 0;
};

// The reference for a streamed ingest: `text` applied as one batch to a store in
// `dir`, and its changes (ChangesText).
struct OneBatch {
  std::unique_ptr<Store> store;
  io::IngestBatch parsed;
  std::string changes;
};
OneBatch ApplyAsOneBatch(const std::string& dir, const std::string& text,
                         const StoreOptions& options, const WriteOptions& w) {
  OneBatch out;
  auto store = Store::Open(dir, options);
  REQUIRE(store.ok());
  out.store = std::move(store).value();
  Result<io::IngestBatch> parsed = io::ParseIngest(text);
  REQUIRE(parsed.ok());
  out.parsed = std::move(parsed).value();
  REQUIRE(out.store->Apply(out.parsed.batch, w).ok());
  out.changes = ChangesText(out.store.get());
  return out;
}

// A large stream into a store whose map is far too small: with the input's size
// as the hint the map is grown once, before the write, which then reads the
// input once (where an unhinted stream filled the map and was read again).
TEST_CASE("an ingest grows the map to the input's size before it writes",
          "[tools][ingest][stream]") {
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += R"({"op":"node","key":"fact:)" + std::to_string(i) + R"(","type":"fact","content":")" +
            std::string(200, 'x') + "\"}\n";
    text += R"({"op":"edge","src":"fact:)" + std::to_string(i) + R"(","rel":"related_to","dst":"fact:)" +
            std::to_string(i / 2) + "\"}\n";
  }
  TempDir dir;
  StoreOptions small;
  small.durable = false;
  small.TEST_map_size = 64 << 10;
  for (bool hinted : {true, false}) {
    INFO("hinted " << hinted);
    auto store = Store::Open(dir.Sub(hinted ? "hinted" : "unhinted"), small);
    REQUIRE(store.ok());
    IngestReader reader(text);
    reader.set_piece_limits(500, io::kIngestPieceBytes);
    io::ReadAheadStream read_ahead(&reader);
    CHECK(read_ahead.SizeHint() == text.size());
    Counted stream(&read_ahead, hinted ? read_ahead.SizeHint() : 0);
    REQUIRE(Must((*store)->ApplyStream(&stream)) == 1);
    auto stats = Must((*store)->Stats());
    CHECK(stats.live_nodes == 3000);
    CHECK(stats.live_edges == 3000);
    // The store took less than twice its input: inside the three times the
    // hinted map was grown for.
    CHECK(stats.used_bytes < 2 * text.size());
    if (hinted) {
      CHECK(stream.rewinds() == 1);
    } else {
      CHECK(stream.rewinds() > 1);
    }
  }
}

TEST_CASE("pieces of any size apply as the one batch would", "[tools][ingest][stream]") {
  const std::string text = Workload(200);
  TempDir dir;
  StoreOptions options;
  options.dimension = 4;
  WriteOptions w;
  w.ts = 1000;
  // The reference: the whole file as one batch.
  const OneBatch whole = ApplyAsOneBatch(dir.Sub("whole"), text, options, w);
  const std::string& expected = whole.changes;
  CHECK(expected.find(" d\n") != std::string::npos);  // some edges do name missing nodes
  int reran[2] = {0, 0};  // runs whose map filled, by read ahead
  for (size_t ops : {1, 2, 3, 16, 1000}) {
    for (size_t bytes : {size_t{1}, size_t{100}, io::kIngestPieceBytes}) {
      for (bool ahead : {false, true}) {  // read on one thread, or a piece ahead on a second
        INFO("piece of " << ops << " ops, " << bytes << " bytes, read ahead " << ahead);
        StoreOptions small = options;
        small.TEST_map_size = 64 << 10;  // the map fills and grows, so the stream is read again
        auto store = Store::Open(dir.Sub("p" + std::to_string(ops) + "-" + std::to_string(bytes) +
                                         (ahead ? "a" : "")),
                                 small);
        REQUIRE(store.ok());
        IngestReader reader(text);
        reader.set_piece_limits(ops, bytes);
        io::ReadAheadStream read_ahead(&reader);
        // Without the input's size as a hint, so that the full map reruns the write.
        Counted stream(ahead ? static_cast<BatchStream*>(&read_ahead) : &reader);
        Result<uint64_t> rev = (*store)->ApplyStream(&stream, w);
        reran[ahead] += stream.rewinds() > 1;
        REQUIRE(rev.ok());
        CHECK(*rev == 1);
        CHECK(reader.ops() == whole.parsed.batch.size());
        CHECK(reader.lines() == whole.parsed.lines);
        CHECK(ChangesText(store->get()) == expected);
        CHECK((*store)->Stats()->live_nodes == whole.store->Stats()->live_nodes);
      }
    }
  }
  // The rerun from the first piece, on one thread and with a piece read ahead.
  CHECK(reran[0] > 0);
  CHECK(reran[1] > 0);
}

// Thousands of nodes: the revision's node table (which answers the endpoint
// checks of later pieces, and sets the missing-endpoint flags again at the end)
// grows several times, and deleted nodes, nodes named before they are written and
// endpoints of other pieces are all answered from it.
TEST_CASE("pieces apply as the one batch would with thousands of nodes",
          "[tools][ingest][stream]") {
  std::string text = Workload(5000);
  // Deleted nodes written again at the end, one with a new edge.
  for (int i : {7, 18, 4993}) {
    text += R"({"op":"node","key":"fact:)" + std::to_string(i) + R"(","type":"fact","content":"again"})" "\n";
  }
  text += R"({"op":"edge","src":"fact:18","rel":"calls","dst":"fact:4993"})" "\n";
  TempDir dir;
  StoreOptions options;
  options.dimension = 4;
  options.durable = false;
  WriteOptions w;
  w.ts = 1000;
  const OneBatch whole = ApplyAsOneBatch(dir.Sub("whole"), text, options, w);
  const std::string& expected = whole.changes;
  // Edges whose source or destination is deleted later, or written later.
  CHECK(expected.find(" s\n") != std::string::npos);
  CHECK(expected.find(" d\n") != std::string::npos);
  for (size_t ops : {5, 997}) {
    for (bool ahead : {false, true}) {
      INFO("piece of " << ops << " ops, read ahead " << ahead);
      // Read ahead, in a map that fills: the rerun starts again with a table
      // that had grown.
      StoreOptions piece_options = options;
      if (ahead) piece_options.TEST_map_size = 64 << 10;
      auto store =
          Store::Open(dir.Sub("p" + std::to_string(ops) + (ahead ? "a" : "")), piece_options);
      REQUIRE(store.ok());
      IngestReader reader(text);
      reader.set_piece_limits(ops, io::kIngestPieceBytes);
      io::ReadAheadStream read_ahead(&reader);
      Counted stream(ahead ? static_cast<BatchStream*>(&read_ahead) : &reader);
      Result<uint64_t> rev = (*store)->ApplyStream(&stream, w);
      REQUIRE(rev.ok());
      CHECK(*rev == 1);
      CHECK(reader.ops() == whole.parsed.batch.size());
      if (ahead) CHECK(stream.rewinds() > 1);
      CHECK(ChangesText(store->get()) == expected);
      auto stats = Must((*store)->Stats());
      auto reference = Must(whole.store->Stats());
      CHECK(stats.live_nodes == reference.live_nodes);
      CHECK(stats.live_edges == reference.live_edges);
    }
  }
}

// The commit decodes the revision's edge entries again only when a piece wrote
// nodes after an earlier piece wrote edges. In pieces of a few operations: nodes
// then edges (no second look: the endpoint checks saw every node); edges then
// nodes (the flags set while writing are wrong: missing, then written); and
// nodes, edges, pieces of kv alone, then a delete of a node the edges name
// (present when they were written, missing at the end).
TEST_CASE("edge endpoint flags are right whether nodes come before or after the edges",
          "[tools][ingest][stream]") {
  std::string nodes, edges;
  for (int i = 0; i < 40; ++i) {
    nodes += R"({"op":"node","key":"n:)" + std::to_string(i) + R"(","type":"fact"})" "\n";
    // Every third edge names a node no line writes.
    const std::string dst = i % 3 == 0 ? "ghost:" + std::to_string(i) : "n:" + std::to_string(i / 2);
    edges += R"({"op":"edge","src":"n:)" + std::to_string(i) + R"(","rel":"calls","dst":")" + dst +
             "\"}\n";
  }
  nodes += R"({"op":"del_node","key":"n:4"})" "\n";  // named by edges 4, 8 and 9
  TempDir dir;
  StoreOptions options;
  options.durable = false;
  WriteOptions w;
  w.ts = 1000;
  std::string kv;
  for (int i = 0; i < 15; ++i) {
    kv += R"({"op":"kv","scope":"s","ns":"n","key":"k)" + std::to_string(i) + R"(","value":"v"})" "\n";
  }
  const std::string texts[] = {nodes + edges, edges + nodes,
                               nodes + edges + kv + R"({"op":"del_node","key":"n:5"})" "\n"};
  for (int order = 0; order < 3; ++order) {
    INFO("order " << order);
    const std::string& text = texts[order];
    const std::string tag = std::to_string(order);
    const OneBatch whole = ApplyAsOneBatch(dir.Sub("whole" + tag), text, options, w);
    CHECK(whole.changes.find(" d\n") != std::string::npos);  // the ghosts and n:4
    CHECK(whole.changes.find(" s\n") != std::string::npos);  // n:4's own edge
    auto store = Store::Open(dir.Sub("pieces" + tag), options);
    REQUIRE(store.ok());
    IngestReader reader(text);
    reader.set_piece_limits(7, io::kIngestPieceBytes);
    REQUIRE(Must((*store)->ApplyStream(&reader, w)) == 1);
    CHECK(ChangesText(store->get()) == whole.changes);
  }
}

// One parser reads a file's lines one after another: a vector's room is sized from
// the line before, and a short vector after a long one does not keep the long
// one's room (a piece holds thousands of them).
TEST_CASE("the fast parser sizes vectors from the line before", "[tools][ingest][stream]") {
  auto line = [](int dims) {
    std::string text = R"({"op":"node","key":"k","type":"fact","vector":[)";
    for (int i = 0; i < dims; ++i) text += (i ? ",0." : "0.") + std::to_string(i + 1);
    return text + "]}" + std::string(io::kLinePadding, ' ');
  };
  FastLineParser parser;
  Batch batch;
  for (int dims : {4096, 3, 3, 0, 384, 384}) {
    const std::string text = line(dims);
    REQUIRE(parser.Add(text.data(), text.size() - io::kLinePadding, &batch));
    const std::vector<float>& v = batch.ops().back().node().vector;
    REQUIRE(v.size() == static_cast<size_t>(dims));
    CHECK(v.capacity() <= 2 * v.size() + 64);
    if (dims > 0) CHECK(v.back() == std::stof("0." + std::to_string(dims)));
  }
}

// Every operation of every piece with its line number, to compare two streams.
std::vector<std::string> Pieces(BatchStream* stream, const std::vector<size_t>& (*lines)(void*),
                                void* owner, size_t max_pieces, Status* end) {
  std::vector<std::string> out;
  Batch piece;
  while (out.size() < max_pieces) {
    Result<bool> more = stream->Next(&piece);
    if (!more.ok() || !*more) {
      *end = more.ok() ? Status::OK() : more.status();
      break;
    }
    std::string text;
    REQUIRE(lines(owner).size() == piece.size());
    for (size_t i = 0; i < piece.size(); ++i) {
      text += std::to_string(lines(owner)[i]) + ":" + Describe(piece.ops()[i]) + "\n";
    }
    out.push_back(std::move(text));
  }
  return out;
}

// ReadAheadStream cuts pieces in order and parses them on several threads; what
// it hands out must be the reader's own pieces, in the reader's order, with their
// line numbers, also after a rewind in the middle, and the first error in input
// order when later pieces are bad too.
TEST_CASE("pieces parsed on several threads are the reader's pieces, in order",
          "[tools][ingest][stream]") {
  std::string text = Workload(400);
  text += "\r\n  \n";
  text += R"({"op":"node","key":"fact:last","type":"fact","meta":{"z":1}})" "\r\n";
  auto reader_lines = [](void* r) -> const std::vector<size_t>& {
    return static_cast<IngestReader*>(r)->op_lines();
  };
  auto ahead_lines = [](void* a) -> const std::vector<size_t>& {
    return static_cast<io::ReadAheadStream*>(a)->op_lines();
  };
  IngestReader plain(text);
  plain.set_piece_limits(7, 300);
  Status end;
  const std::vector<std::string> expected = Pieces(&plain, reader_lines, &plain, SIZE_MAX, &end);
  REQUIRE(end.ok());
  REQUIRE(expected.size() > 20);
  for (size_t threads : {1, 2, 3, 5}) {
    INFO(threads << " threads");
    IngestReader reader(text);
    reader.set_piece_limits(7, 300);
    io::ReadAheadStream ahead(&reader, threads);
    // A few pieces, then from the start again, then all of them.
    std::vector<std::string> first = Pieces(&ahead, ahead_lines, &ahead, 3, &end);
    CHECK(first == std::vector<std::string>(expected.begin(), expected.begin() + 3));
    REQUIRE(ahead.Rewind().ok());
    CHECK(Pieces(&ahead, ahead_lines, &ahead, SIZE_MAX, &end) == expected);
    CHECK(end.ok());
    Batch piece;
    CHECK(!Must(ahead.Next(&piece)));  // the end stays the end
    CHECK(piece.empty());
    CHECK(reader.ops() == plain.ops());
    CHECK(reader.lines() == plain.lines());
  }
  // Bad lines in a middle piece and in later ones: the pieces before the first
  // bad line come out whole, then its error, again on every later call.
  std::string bad = Workload(60);
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = bad.find('\n', at)) != std::string::npos; at = nl + 1) {
    lines.push_back(bad.substr(at, nl - at));
  }
  REQUIRE(lines.size() > 60);
  lines[37] = R"({"op":"node","key":"x","type":"fact")";  // line 38
  // The pieces (7 operation lines each; blank lines do not count) before line 38's.
  const size_t ops_before = static_cast<size_t>(
      std::count_if(lines.begin(), lines.begin() + 37, [](const std::string& l) { return !l.empty(); }));
  REQUIRE(ops_before / 7 >= 4);
  lines[50] = R"({"op":"nope"})";
  lines[58] = "{";
  bad.clear();
  for (const std::string& l : lines) bad += l + "\n";
  for (size_t threads : {1, 2, 4}) {
    INFO(threads << " threads");
    IngestReader reader(bad);
    reader.set_piece_limits(7, SIZE_MAX);
    io::ReadAheadStream ahead(&reader, threads);
    std::vector<std::string> before = Pieces(&ahead, ahead_lines, &ahead, SIZE_MAX, &end);
    CHECK(before.size() == ops_before / 7);
    CHECK(end.message().rfind("line 38: malformed JSON", 0) == 0);
    Batch piece;
    Result<bool> again = ahead.Next(&piece);
    REQUIRE(!again.ok());
    CHECK(again.status().message() == end.message());
    // Unsetting the work after the error (ApplyStream does) does not skip past it.
    ahead.SetPieceWork(nullptr);
    again = ahead.Next(&piece);
    REQUIRE(!again.ok());
    CHECK(again.status().message() == end.message());
    CHECK(piece.empty());
  }
}

// ApplyStream hands its per-piece work (validation, hashing) to the stream's
// threads; what a piece's work made must come back with that piece.
TEST_CASE("the piece work runs on the reading threads and comes back with its piece",
          "[tools][ingest][stream]") {
  const std::string text = Workload(300);
  for (size_t threads : {1, 2, 3}) {
    INFO(threads << " threads");
    IngestReader reader(text);
    reader.set_piece_limits(11, SIZE_MAX);
    io::ReadAheadStream ahead(&reader, threads);
    std::atomic<int> calls{0};
    ahead.SetPieceWork([&calls](const Batch& b) -> std::shared_ptr<void> {
      ++calls;
      return std::make_shared<std::string>(Describe(b.ops().front()) + "#" +
                                           std::to_string(b.size()));
    });
    Batch piece;
    size_t pieces = 0;
    while (Must(ahead.Next(&piece))) {
      auto made = std::static_pointer_cast<std::string>(ahead.PieceWorkResult());
      REQUIRE(made != nullptr);
      CHECK(*made == Describe(piece.ops().front()) + "#" + std::to_string(piece.size()));
      if (++pieces == 4) {
        // Changing the work drops the pieces read ahead: Next refuses until Rewind.
        ahead.SetPieceWork(nullptr);
        Result<bool> refused = ahead.Next(&piece);
        REQUIRE(!refused.ok());
        CHECK(refused.status().IsAborted());
        REQUIRE(ahead.Rewind().ok());
        REQUIRE(Must(ahead.Next(&piece)));
        CHECK(ahead.PieceWorkResult() == nullptr);  // no work now
        CHECK(piece.ops().front().node().key == "fact:0");
        break;
      }
    }
    CHECK(calls >= 4);
    // At the end (and after an error) the work may be unset without a rewind.
    ahead.SetPieceWork([](const Batch&) { return std::make_shared<int>(1); });
    REQUIRE(ahead.Rewind().ok());
    while (Must(ahead.Next(&piece))) CHECK(ahead.PieceWorkResult() != nullptr);
    CHECK(ahead.PieceWorkResult() == nullptr);
    ahead.SetPieceWork(nullptr);
    CHECK(!Must(ahead.Next(&piece)));
  }
}

// ReadAheadStream parses piece k+1 while piece k is applied: an error of piece k
// must still win over a parse error of piece k+1, and errors name input lines.
TEST_CASE("reading a piece ahead reports the first error in input order", "[tools][ingest][stream]") {
  const std::string head = R"({"op":"node","key":"fact:a","type":"fact"})" "\n"
                           R"({"op":"node","key":"fact:b","type":"fact"})" "\n";
  const std::string bad_rel = R"({"op":"edge","src":"fact:a","rel":"bogus","dst":"fact:b"})" "\n";
  const std::string good_edge = R"({"op":"edge","src":"fact:a","rel":"calls","dst":"fact:b"})" "\n";
  const std::string node_c = R"({"op":"node","key":"fact:c","type":"fact"})" "\n";
  const std::string malformed = "{\"op\":\"node\"\n";
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {head + bad_rel + node_c + malformed, "line 3: unknown relation 'bogus'"},
      {head + good_edge + node_c + malformed, "line 5: malformed JSON"},
      {head + "\n" + good_edge + bad_rel, "line 5: unknown relation 'bogus'"},
      // Validation errors, found on the reading threads, still come in input order.
      {head + R"({"op":"node","key":"","type":"fact"})" "\n" + node_c + malformed,
       "line 3: key: empty"},
      {head + good_edge + R"({"op":"edge","src":"fact:a","rel":"calls","dst":""})" "\n" + malformed,
       "line 4: dst: empty"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    TempDir dir;
    auto store = Store::Open(dir.Sub("s"), StoreOptions());
    REQUIRE(store.ok());
    IngestReader reader(c.text);
    reader.set_piece_limits(2, SIZE_MAX);  // lines 1-2, 3-4, 5...
    io::ReadAheadStream ahead(&reader);
    Result<uint64_t> rev = (*store)->ApplyStream(&ahead, WriteOptions());
    REQUIRE(!rev.ok());
    const Status s = io::ApplyErrorToLine(rev.status(), ahead.op_lines());
    INFO(s.ToString());
    CHECK(s.IsInvalidArgument());
    CHECK(s.message().rfind(c.message, 0) == 0);
    CHECK(*(*store)->revision() == 0);
  }
}

TEST_CASE("a streamed ingest is all or nothing", "[tools][ingest][stream]") {
  TempStore s;
  REQUIRE(s.Run({"ingest", "-"}, R"({"op":"node","key":"fact:keep","type":"fact"})").exit_code == 0);
  const std::string before = s.Stats();
  // Far more operations than one piece holds: the bad line is in the last piece.
  std::string text;
  const int n = static_cast<int>(io::kIngestPieceOps) * 2 + 500;
  for (int i = 0; i < n; ++i) {
    text += R"({"op":"node","key":"fact:)" + std::to_string(i) + R"(","type":"fact"})" "\n";
  }
  const std::string lines = std::to_string(n + 1);
  struct Case {
    std::string last;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"op":"node","key":"x","type":"fact")", "line " + lines + ": malformed JSON"},
      {R"({"op":"node","key":"x","type":"fact","bogus":1})",
       "line " + lines + ": unknown field \"bogus\" for op \"node\""},
      {R"({"op":"edge","src":"fact:1","rel":"blocks","dst":"fact:2"})",
       "line " + lines + ": unknown relation"},
      {R"({"op":"node","key":"x","type":"fact","vector":[1]})", "line " + lines + ": "},
  };
  for (const Case& c : cases) {
    INFO(c.last);
    WriteFile(s.dir().Sub("big.jsonl"), text + c.last + "\n");
    for (bool from_stdin : {false, true}) {
      RunResult r = from_stdin ? s.Run({"ingest", "-"}, text + c.last)
                               : s.Run({"ingest", s.dir().Sub("big.jsonl")});
      INFO(r.err);
      CHECK(r.exit_code == 4);
      CHECK(r.err.rfind("amem ingest: Invalid argument: " + c.message, 0) == 0);
      CHECK(s.Stats() == before);
    }
  }
  WriteFile(s.dir().Sub("big.jsonl"), text);
  RunResult r = s.Run({"ingest", s.dir().Sub("big.jsonl"), "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["rev"] == 2);
  CHECK(r.json()["ops"] == n);
}

}  // namespace
}  // namespace amem::testing
