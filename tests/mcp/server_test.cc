// The MCP protocol core (tools/mcp/server.h) with a fake tool: framing, lifecycle,
// JSON-RPC errors, ids, notifications, oversized lines, argument validation.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "tools/mcp/common.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/server.h"

using namespace amem::mcp;

namespace {

ToolRegistry EchoRegistry() {
  ToolRegistry reg;
  Tool echo;
  echo.name = "echo";
  echo.description = "Echoes its text.";
  echo.read_only = true;
  echo.input_schema = Json::parse(R"({
    "type": "object",
    "properties": {
      "text": {"type": "string", "minLength": 1},
      "times": {"type": "integer", "minimum": 1, "maximum": 3}
    },
    "required": ["text"],
    "additionalProperties": false
  })");
  echo.handler = [](const Json& args) {
    ToolResult r;
    std::string out;
    for (int64_t i = 0; i < ArgInt(args, "times", 1); ++i) out += ArgString(args, "text");
    r.structured = {{"text", out}};
    return r;
  };
  reg.Add(std::move(echo));
  Tool boom;
  boom.name = "boom";
  boom.description = "Always throws.";
  boom.handler = [](const Json&) -> ToolResult { throw std::runtime_error("kaboom"); };
  reg.Add(std::move(boom));
  return reg;
}

Json Call(Server& s, std::string_view line) {
  auto r = s.HandleLine(line);
  REQUIRE(r.has_value());
  CHECK(r->find('\n') == std::string::npos);  // one message per line
  return Json::parse(*r);
}

}  // namespace

TEST_CASE("initialize negotiates the protocol version", "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  for (std::string v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    Server s(&reg, "use it");
    Json r = Call(s, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")" +
                         v + R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    CHECK(r["id"] == 1);
    CHECK(r["result"]["protocolVersion"] == v);
    CHECK(r["result"]["capabilities"]["tools"].is_object());
    CHECK(r["result"]["serverInfo"]["name"] == "amem");
    CHECK(r["result"]["instructions"] == "use it");
  }
  Server s(&reg);
  Json r = Call(s, R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  CHECK(r["result"]["protocolVersion"] == "2025-11-25");
  CHECK(!r["result"].contains("instructions"));
  r = Call(s, R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})");
  CHECK(r["error"]["code"] == -32602);
}

TEST_CASE("ids are echoed exactly; notifications get no answer", "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":"req-7","method":"ping"})")["id"] == "req-7");
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":0,"method":"ping"})")["id"] == 0);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":-5,"method":"ping"})")["id"] == -5);
  Json big = Call(s, R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})");
  CHECK(big["id"].get<uint64_t>() == 18446744073709551615ull);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":"","method":"ping"})")["id"] == "");
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":1,"method":"ping"})")["result"] == Json::object());
  CHECK(!s.HandleLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK(!s.HandleLine(R"({"jsonrpc":"2.0","method":"no/such/notification"})"));
  CHECK(!s.HandleLine(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"boom"}})"));
  // A response sent by the client (we never ask) is ignored.
  CHECK(!s.HandleLine(R"({"jsonrpc":"2.0","id":9,"result":{}})"));
  CHECK(!s.HandleLine(""));
  CHECK(!s.HandleLine("   \r"));
}

TEST_CASE("protocol errors keep the server answering", "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  Json r = Call(s, R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})");
  CHECK(r["error"]["code"] == -32601);
  CHECK(r["id"] == 3);
  r = Call(s, R"({"jsonrpc":"2.0","id":3,"method":)");
  CHECK(r["error"]["code"] == -32700);
  CHECK(r["id"].is_null());
  r = Call(s, "\xff\xfe");
  CHECK(r["error"]["code"] == -32700);
  r = Call(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xc3\"}");
  CHECK(r["error"]["code"] == -32700);  // invalid UTF-8 inside a string
  r = Call(s, R"([1])");
  REQUIRE(r.is_array());
  CHECK(r[0]["error"]["code"] == -32600);
  CHECK(Call(s, "[]")["error"]["code"] == -32600);
  CHECK(Call(s, "42")["error"]["code"] == -32600);
  CHECK(Call(s, R"({"id":4,"method":"ping"})")["error"]["code"] == -32600);
  CHECK(Call(s, R"({"jsonrpc":"1.0","id":4,"method":"ping"})")["error"]["code"] == -32600);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":4,"method":7})")["error"]["code"] == -32600);
  r = Call(s, R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})");
  CHECK(r["error"]["code"] == -32600);
  CHECK(r["id"].is_null());
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":null,"method":"ping"})")["error"]["code"] == -32600);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":5,"method":"ping","params":[1]})")["error"]["code"] ==
        -32600);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":6})")["error"]["code"] == -32600);
  // Still alive.
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":7,"method":"ping"})")["result"] == Json::object());
}

TEST_CASE("batches answer every request in order", "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  Json r = Call(s, R"([{"jsonrpc":"2.0","id":1,"method":"ping"},
                       {"jsonrpc":"2.0","method":"notifications/initialized"},
                       {"jsonrpc":"2.0","id":"b","method":"nope"}])");
  REQUIRE(r.size() == 2);
  CHECK(r[0]["id"] == 1);
  CHECK(r[1]["id"] == "b");
  CHECK(r[1]["error"]["code"] == -32601);
  CHECK(!s.HandleLine(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])"));
}

TEST_CASE("ids that are not 64-bit integers come back exactly as written",
          "[mcp][protocol][hardening]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  for (std::string id : {"123456789012345678901234567890", "1.5", "-0.25", "1e3", "2.50",
                         "-123456789012345678901234567890"}) {
    auto line = s.HandleLine(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
    REQUIRE(line);
    INFO(*line);
    CHECK(line->find("\"id\":" + id + ",") != std::string::npos);
    CHECK(Json::parse(*line)["result"] == Json::object());
  }
  // In a batch, and in an error response, too.
  auto line = s.HandleLine(
      R"([{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"nope"},)"
      R"({"jsonrpc":"2.0","id":7.25,"method":"ping"}])");
  REQUIRE(line);
  INFO(*line);
  CHECK(line->find("\"id\":123456789012345678901234567890,") != std::string::npos);
  CHECK(line->find("\"id\":7.25,") != std::string::npos);
  Json r = Json::parse(*line);
  REQUIRE(r.size() == 2);
  CHECK(r[0]["error"]["code"] == -32601);
  // A member called "id" deeper down is an ordinary number.
  Json echo = Call(s, R"({"jsonrpc":"2.0","id":1,"method":"tools/call",)"
                      R"("params":{"name":"echo","arguments":{"text":"x"},"_meta":{"id":1.5}}})");
  CHECK(echo["result"]["isError"] == false);
}

TEST_CASE("deep nesting gets -32600 and the server keeps answering",
          "[mcp][protocol][hardening]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  // Once a SIGSEGV: params holding an array nested 120,000 deep.
  const std::string deep = std::string(120000, '[') + std::string(120000, ']');
  Json r = Call(s, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
                   R"("arguments":{"text":)" + deep + "}}}");
  CHECK(r["error"]["code"] == -32600);
  CHECK(r["error"]["message"].get<std::string>().find("nested deeper than 64 levels") !=
        std::string::npos);
  r = Call(s, R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,)"
              R"("method":"ping","params":{"x":)" + deep + "}}]");
  CHECK(r["error"]["code"] == -32600);
  // Deep but within the limit is an ordinary request (the echo tool refuses the type).
  const std::string ok = std::string(60, '[') + std::string(60, ']');
  r = Call(s, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",)"
              R"("arguments":{"text":)" + ok + "}}}");
  CHECK(r["result"]["isError"] == true);
  CHECK(Call(s, R"({"jsonrpc":"2.0","id":4,"method":"ping"})")["result"] == Json::object());
}

TEST_CASE("tools/list describes every tool with annotations", "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  Json r = Call(s, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  const Json& tools = r["result"]["tools"];
  REQUIRE(tools.size() == 2);
  CHECK(tools[0]["name"] == "echo");
  CHECK(tools[0]["inputSchema"]["type"] == "object");
  CHECK(tools[0]["annotations"]["readOnlyHint"] == true);
  // destructive/idempotent mean something only for a tool that writes.
  CHECK_FALSE(tools[0]["annotations"].contains("destructiveHint"));
  CHECK(tools[0]["annotations"]["openWorldHint"] == false);
  CHECK(tools[1]["inputSchema"] == Json::object());
}

TEST_CASE("tools/call: results, bad arguments and failures", "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  Json r = Call(s, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ab","times":2}}})");
  CHECK(r["result"]["isError"] == false);
  CHECK(r["result"]["structuredContent"]["text"] == "abab");
  CHECK(r["result"]["content"][0]["type"] == "text");
  CHECK(Json::parse(r["result"]["content"][0]["text"].get<std::string>())["text"] == "abab");

  auto tool_error = [&](std::string_view args) {
    Json r = Call(s, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":)" +
                         std::string(args) + "}}");
    REQUIRE(r.contains("result"));
    CHECK(r["result"]["isError"] == true);
    CHECK(!r["result"].contains("structuredContent"));
    return r["result"]["content"][0]["text"].get<std::string>();
  };
  CHECK_THAT(tool_error("{}"), Catch::Contains("missing required field \"text\""));
  CHECK_THAT(tool_error(R"({"text":5})"), Catch::Contains("text: expected a string, got an integer"));
  CHECK_THAT(tool_error(R"({"text":""})"), Catch::Contains("text: must not be empty"));
  CHECK_THAT(tool_error(R"({"text":"a","times":9})"), Catch::Contains("times: must be at most 3"));
  CHECK_THAT(tool_error(R"({"text":"a","times":1.5})"), Catch::Contains("expected an integer"));
  CHECK_THAT(tool_error(R"({"text":"a","tmes":1})"), Catch::Contains("unknown field \"tmes\""));
  CHECK_THAT(tool_error(R"([1,2])"), Catch::Contains("expected an object"));
  // 2.0 is an integer for JSON Schema.
  r = Call(s, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","times":2.0}}})");
  CHECK(r["result"]["structuredContent"]["text"] == "xx");

  r = Call(s, R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"boom"}})");
  CHECK(r["result"]["isError"] == true);
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(), Catch::Contains("kaboom"));
  r = Call(s, R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}})");
  CHECK(r["error"]["code"] == -32602);
  r = Call(s, R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}})");
  CHECK(r["error"]["code"] == -32602);
}

TEST_CASE("schema validation names nested places", "[mcp][schema]") {
  Json schema = Json::parse(R"({
    "type": "object",
    "properties": {"items": {"type": "array", "maxItems": 2, "items": {
      "type": "object", "required": ["n"], "additionalProperties": false,
      "properties": {"n": {"type": ["string", "null"]}, "k": {"enum": ["a", "b"]}}}}},
    "required": ["items"]
  })");
  CHECK(ValidateAgainstSchema(schema, Json::parse(R"({"items":[{"n":"x"},{"n":null,"k":"a"}]})")).ok());
  CHECK(ValidateAgainstSchema(schema, Json::parse(R"({"items":[],"extra":1})")).ok());  // open
  auto msg = [&](std::string_view v) {
    amem::Status st = ValidateAgainstSchema(schema, Json::parse(v));
    REQUIRE(!st.ok());
    CHECK(st.IsInvalidArgument());
    return st.message();
  };
  CHECK(msg(R"({"items":[{"n":1}]})") == "items[0].n: expected a string or a null, got an integer");
  CHECK(msg(R"({"items":[{"n":"a"},{}]})") == "items[1]: missing required field \"n\"");
  CHECK(msg(R"({"items":[{"n":"a","k":"c"}]})") == R"(items[0].k: must be one of "a", "b", got "c")");
  CHECK_THAT(msg(R"({"items":[{"n":"a"},{"n":"a"},{"n":"a"}]})"), Catch::Contains("at most 2 items"));
  CHECK(msg("3") == "arguments: expected an object, got an integer");
  // Lengths count characters, not bytes.
  Json s2 = Json::parse(R"({"type":"string","maxLength":2})");
  CHECK(ValidateAgainstSchema(s2, Json("é€")).ok());
  CHECK(!ValidateAgainstSchema(s2, Json("abc")).ok());
}

namespace {

// Runs Serve over pipes: writes `input`, closes, returns everything written back.
std::string ServeOver(Server& s, const std::string& input, size_t max_line, int* rc) {
  int in[2], out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  std::thread writer([&] {
    size_t off = 0;
    while (off < input.size()) {
      ssize_t n = write(in[1], input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(in[1]);
  });
  std::string output;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof(buf))) > 0) output.append(buf, static_cast<size_t>(n));
  });
  *rc = s.Serve(in[0], out[1], max_line);
  close(out[1]);
  writer.join();
  reader.join();
  close(in[0]);
  close(out[0]);
  return output;
}

}  // namespace

TEST_CASE("Serve frames lines, survives oversized ones, exits at end of input",
          "[mcp][protocol]") {
  ToolRegistry reg = EchoRegistry();
  Server s(&reg);
  std::string huge(300000, 'x');  // spans several reads
  std::string input =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
      "\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
      "\"arguments\":{\"text\":\"" + huge + "\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "not json\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}";  // no final newline
  int rc = -1;
  std::string out = ServeOver(s, input, 1000, &rc);
  CHECK(rc == 0);
  std::vector<Json> lines;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    REQUIRE(nl != std::string::npos);
    lines.push_back(Json::parse(out.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["id"] == 1);
  CHECK(lines[1]["error"]["code"] == -32600);
  CHECK_THAT(lines[1]["error"]["message"].get<std::string>(), Catch::Contains("longer than 1000"));
  CHECK(lines[2]["error"]["code"] == -32700);
  CHECK(lines[3]["id"] == "last");

  // With the default limit the same big call goes through; its 300 KB answer is
  // cut to the default answer bound (max_bytes, tools/mcp/tool.h).
  out = ServeOver(s, input, kMaxLineBytes, &rc);
  CHECK(rc == 0);
  size_t start = out.find("{\"jsonrpc\":\"2.0\",\"id\":2,");
  REQUIRE(start != std::string::npos);
  std::string line = out.substr(start, out.find('\n', start) - start);
  CHECK(line.size() <= kMaxResponseBytes);
  Json r = Json::parse(line)["result"];
  CHECK(r["isError"] == false);
  CHECK(r["structuredContent"]["truncated"] == true);
  std::string text = r["structuredContent"]["text"];
  CHECK(text.size() > kDefaultAnswerBytes / 2);
  CHECK(r["content"][0]["text"].get<std::string>().size() <= kDefaultAnswerBytes);
  CHECK(text.ends_with("…"));
  CHECK(Json::parse(r["content"][0]["text"].get<std::string>()) == r["structuredContent"]);
}

TEST_CASE("ResultCost counts both copies of a result", "[mcp][budget]") {
  Json plain{{"a", "xyz"}};
  std::string json = DumpLine(plain);  // {"a":"xyz"}
  CHECK(ResultCost(plain) == json.size() + json.size() + 2 + 4);  // 4 escaped quotes
  Json awkward{{"t", "a\"b\\c\nd\x01\t é ☕"}};
  CHECK(ResultCost(awkward) == DumpLine(awkward).size() + DumpLine(Json(DumpLine(awkward))).size());
  // JsonStringBytes is what the serializer writes.
  for (const std::string& t : std::vector<std::string>{"", "plain", "q\"uote", "back\\slash", "\b\f\n\r\t", "\x01\x1f\x7f",
                        "naïve ☕", DumpLine(awkward)}) {
    INFO(t);
    CHECK(JsonStringBytes(t) == DumpLine(Json(t)).size());
  }
}

TEST_CASE("ShrinkToFit cuts strings, then containers, and marks the object", "[mcp][budget]") {
  Json small{{"k", "v"}};
  CHECK_FALSE(ShrinkToFit(&small, 1000));
  CHECK(small == Json({{"k", "v"}}));

  Json node{{"key", "file:a"}, {"content", std::string(100000, 'x') + "é"}, {"n", 7}};
  REQUIRE(ShrinkToFit(&node, 4000));
  CHECK(ResultCost(node) <= 4000);
  CHECK(ResultCost(node) > 3000);  // the longest cut that fits, not a tiny one
  CHECK(node["truncated"] == true);
  CHECK(node["key"] == "file:a");
  CHECK(node["n"] == 7);
  CHECK(node["content"].get<std::string>().ends_with("…"));

  Json many{{"items", Json::array()}};
  for (int i = 0; i < 5000; ++i) many["items"].push_back(std::string(100, 'a'));
  REQUIRE(ShrinkToFit(&many, 8000));
  CHECK(ResultCost(many) <= 8000);
  CHECK(many["items"].size() > 10);
  CHECK(many["truncated"] == true);

  Json nested = Json::array();
  for (int i = 0; i < 100; ++i) nested.push_back(Json{{"m", Json::array({std::string(500, 'b')})}});
  REQUIRE(ShrinkToFit(&nested, 3000));
  CHECK(ResultCost(nested) <= 3000);

  Json tiny{{"a", std::string(1000, 'z')}};
  REQUIRE(ShrinkToFit(&tiny, 10));  // nothing fits: an empty object that says so
  CHECK(tiny == Json({{"truncated", true}}));
}

TEST_CASE("BoundedList: the budget counts both copies; a first item too big is cut",
          "[mcp][budget]") {
  BoundedList list(100, 1000);
  Json item{{"v", std::string(100, 'a')}};
  size_t n = 0;
  while (list.Add(item)) ++n;
  CHECK(n == 1000 / (ResultCost(item) + 2));
  CHECK(list.bytes() <= 1000);
  CHECK(list.full());

  BoundedList one(100, 1000);
  CHECK(one.Add(Json{{"v", std::string(5000, 'b')}}));
  CHECK(one.full());
  CHECK_FALSE(one.Add(Json{{"v", "c"}}));
  Json items = one.Take();
  REQUIRE(items.size() == 1);
  CHECK(items[0]["truncated"] == true);
  CHECK(ResultCost(items[0]) + 2 <= 1000);

  BoundedList limited(2, 1 << 20);
  CHECK(limited.Add(1));
  CHECK(limited.Add(2));
  CHECK_FALSE(limited.Add(3));
}

TEST_CASE("cursors carry a revision, an offset and a place inside an item", "[mcp][budget]") {
  CHECK(MakeCursor(5, 10) == "r5o10");
  CHECK(MakeCursor(5, 10, 3) == "r5o10s3");
  for (auto [cursor, rev, off, sub] : std::vector<std::tuple<std::string, uint64_t, size_t, size_t>>{
           {"r5o10", 5, 10, 0}, {"r5o10s3", 5, 10, 3}, {"r1o0", 1, 0, 0}}) {
    auto p = PageStartFromArgs(Json{{"cursor", cursor}});
    REQUIRE(p.ok());
    CHECK(p->revision == rev);
    CHECK(p->offset == off);
    CHECK(p->sub == sub);
  }
  for (std::string bad : {"r5o10s", "r5o10s0", "r5o10sx", "r5s3o1", "r5o10s3s4", "r0o1s1"}) {
    INFO(bad);
    CHECK(!PageStartFromArgs(Json{{"cursor", bad}}).ok());
  }
}

TEST_CASE("the server keeps every response within kMaxResponseBytes", "[mcp][budget]") {
  ToolRegistry reg;
  Tool big;
  big.name = "big";
  big.description = "Returns far too much.";
  big.handler = [](const Json& args) {
    ToolResult r;
    std::string kind = args.value("kind", "list");
    if (kind == "list") {
      for (int i = 0; i < 20000; ++i) {
        r.structured["rows"].push_back({{"i", i}, {"s", "row \"" + std::to_string(i) + "\""}});
      }
    } else if (kind == "pretty") {
      r.pretty = true;
      for (int i = 0; i < 2000; ++i) r.structured["rows"].push_back({{"i", i}});
    } else if (kind == "text") {
      r.structured["n"] = 1;
      r.text = std::string(500000, 't');
    } else {
      return ToolError(std::string(500000, 'e'));
    }
    return r;
  };
  reg.Add(std::move(big));
  Server s(&reg);
  for (std::string kind : {"list", "pretty", "text", "error"}) {
    INFO(kind);
    auto line = s.HandleLine(DumpLine(Json{{"jsonrpc", "2.0"}, {"id", "a-long-request-id"},
                                          {"method", "tools/call"},
                                          {"params", {{"name", "big"}, {"arguments", {{"kind", kind}, {"max_bytes", kMaxAnswerBytes}}}}}}));
    REQUIRE(line);
    CHECK(line->size() <= kMaxResponseBytes);
    Json r = Json::parse(*line)["result"];
    if (kind == "error") {
      CHECK(r["isError"] == true);
      continue;
    }
    CHECK(r["isError"] == false);
    const Json& sc = r["structuredContent"];
    if (kind == "list") {
      CHECK(sc["truncated"] == true);
      CHECK(sc["rows"].size() > 100);
      CHECK(Json::parse(r["content"][0]["text"].get<std::string>()) == sc);
    } else if (kind == "pretty") {
      // Compact text was enough: nothing cut.
      CHECK(sc["rows"].size() == 2000);
      CHECK(!sc.contains("truncated"));
    } else {
      CHECK(sc["n"] == 1);
      CHECK(r["content"][0]["text"].get<std::string>().ends_with("…"));
    }
  }
}
