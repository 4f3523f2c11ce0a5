// The store as MCP resources (tools/mcp/resources.h): the URI parser, resources/*
// through the protocol core, their errors, and which subscriptions a write reports.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <unistd.h>

#include "tests/mcp/tool_harness.h"
#include "tools/mcp/resources.h"

using namespace amem;
using namespace amem::mcp;
using amem::mcp::testing::Harness;

namespace {

ResourceUri Parsed(std::string_view uri) {
  auto r = ParseResourceUri(uri);
  INFO(uri << " -> " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

// The message of a URI the parser refuses as malformed.
std::string Malformed(std::string_view uri) {
  auto r = ParseResourceUri(uri);
  INFO(uri);
  REQUIRE(!r.ok());
  CHECK(r.status().IsInvalidArgument());
  return r.status().message();
}

// A store harness whose server serves resources.
struct ResourceHarness : Harness {
  ResourceHarness() : resources(store.get()) { server->SetResources(&resources); }
  // The whole response to a request.
  Json Rpc(const std::string& method, const Json& params) {
    Json req{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}};
    auto line = server->HandleLine(DumpLine(req));
    REQUIRE(line);
    return Json::parse(*line);
  }
  // The document of resources/read, checked for its framing.
  Json ReadDoc(const std::string& uri) {
    Json r = Rpc("resources/read", {{"uri", uri}});
    INFO(DumpLine(r));
    REQUIRE(r.contains("result"));
    const Json& c = r["result"]["contents"];
    REQUIRE(c.size() == 1);
    CHECK(c[0]["uri"] == uri);
    CHECK(c[0]["mimeType"] == "application/json");
    return Json::parse(c[0]["text"].get<std::string>());
  }
  // The error of a request that must fail with `code`.
  Json RpcError(const std::string& method, const Json& params, int code) {
    Json r = Rpc(method, params);
    INFO(DumpLine(r));
    REQUIRE(r.contains("error"));
    CHECK(r["error"]["code"] == code);
    return r["error"];
  }
  uint64_t Revision() {
    auto r = store->revision();
    REQUIRE(r.ok());
    return *r;
  }
  Resources resources;
};

}  // namespace

TEST_CASE("resource URIs name nodes, kv entries and the stats", "[mcp][resources]") {
  CHECK(Parsed("amem://stats").kind == ResourceUri::Kind::kStats);
  ResourceUri n = Parsed("amem://node/file:src/a.cc");
  CHECK(n.kind == ResourceUri::Kind::kNode);
  CHECK(n.key == "file:src/a.cc");
  // A '/' in a node key may be encoded or not; hex digits in either case.
  CHECK(Parsed("amem://node/file:src%2Fa.cc") == n);
  CHECK(Parsed("amem://node/file%3asrc%2fa.cc") == n);
  CHECK(Parsed("amem://node/entity:Caf%C3%A9%20Bar%3F%23%25").key == "entity:Café Bar?#%");
  CHECK(Parsed("amem://node/entity:Café").key == "entity:Café");  // an IRI's characters
  CHECK(Parsed("amem://node/a%0Ab").key == "a\nb");                 // encoded: a key like any
  ResourceUri kv = Parsed("amem://kv/project/decisions/storage/engine");
  CHECK(kv.kind == ResourceUri::Kind::kKv);
  CHECK(kv.scope == "project");
  CHECK(kv.ns == "decisions");
  CHECK(kv.key == "storage/engine");  // the key is the rest
  ResourceUri scoped = Parsed("amem://kv/team%2Fa/my%20ns/k");
  CHECK(scoped.scope == "team/a");
  CHECK(scoped.ns == "my ns");
}

TEST_CASE("malformed resource URIs are refused with what and where", "[mcp][resources]") {
  CHECK_THAT(Malformed(""), Catch::Contains("empty URI"));
  CHECK_THAT(Malformed("amem://node/"), Catch::Contains("empty node key"));
  CHECK_THAT(Malformed("amem://node"), Catch::Contains("missing node key"));
  CHECK_THAT(Malformed("amem://kv/project/decisions"), Catch::Contains("missing parts"));
  CHECK_THAT(Malformed("amem://kv"), Catch::Contains("missing parts"));
  CHECK_THAT(Malformed("amem://kv//decisions/k"), Catch::Contains("empty scope"));
  CHECK_THAT(Malformed("amem://kv/project//k"), Catch::Contains("empty namespace"));
  CHECK_THAT(Malformed("amem://kv/project/decisions/"), Catch::Contains("empty kv key"));
  CHECK_THAT(Malformed("amem://kv/project/d%00/k"), Catch::Contains("namespace holds NUL"));
  CHECK_THAT(Malformed("amem://node/a%2"), Catch::Contains("bad percent-encoding at byte 13"));
  CHECK_THAT(Malformed("amem://node/a%zz"), Catch::Contains("bad percent-encoding at byte 13"));
  CHECK_THAT(Malformed("amem://node/%"), Catch::Contains("bad percent-encoding at byte 12"));
  CHECK_THAT(Malformed("amem://node/%FF"), Catch::Contains("not valid UTF-8"));
  CHECK_THAT(Malformed("amem://node/a\nb"), Catch::Contains("control character U+000A at byte 13"));
  CHECK_THAT(Malformed(std::string("amem://node/a\0b", 15)), Catch::Contains("U+0000"));
  CHECK_THAT(Malformed("amem://node/a\x7f"), Catch::Contains("U+007F"));
  CHECK_THAT(Malformed("amem://node/a\xc2\x85"), Catch::Contains("U+0085"));
  CHECK_THAT(Malformed("amem://node/a b"), Catch::Contains("a space at byte 13"));
  CHECK_THAT(Malformed("amem://node/a?b"), Catch::Contains("no query"));
  CHECK_THAT(Malformed("amem://node/a#b"), Catch::Contains("no fragment"));
  CHECK_THAT(Malformed("amem://node/{key}"), Catch::Contains("fill in the template"));
  CHECK_THAT(Malformed("amem://stats/x"), Catch::Contains("takes no path"));
  CHECK_THAT(Malformed("amem://node/" + std::string(1025, 'k')),
             Catch::Contains("longer than 1024 bytes"));
  CHECK_THAT(Malformed("amem://kv/p/n/" + std::string(257, 'k')),
             Catch::Contains("longer than 256 bytes"));
  CHECK_THAT(Malformed("amem://node/\xff"), Catch::Contains("not valid UTF-8"));
  // Not an amem resource at all: not found.
  for (std::string_view uri : {"file:///etc/passwd", "amem://edge/a", "AMEM://stats", "amem:stats"}) {
    auto r = ParseResourceUri(uri);
    INFO(uri);
    REQUIRE(!r.ok());
    CHECK(r.status().IsNotFound());
    CHECK_THAT(r.status().message(), Catch::Contains("amem://node/{key}"));
  }
}

TEST_CASE("resources are declared, listed and read as JSON documents", "[mcp][resources]") {
  ResourceHarness h;
  Json init = h.Rpc("initialize", {{"protocolVersion", "2025-11-25"}});
  CHECK(init["result"]["capabilities"]["resources"] ==
        Json({{"subscribe", true}, {"listChanged", false}}));
  Json list = h.Rpc("resources/list", Json::object())["result"];
  REQUIRE(list["resources"].size() == 1);
  CHECK(list["resources"][0]["uri"] == "amem://stats");
  CHECK(!list.contains("nextCursor"));
  h.RpcError("resources/list", {{"cursor", "r1o5"}}, -32602);
  Json templates = h.Rpc("resources/templates/list", Json::object())["result"];
  REQUIRE(templates["resourceTemplates"].size() == 2);
  CHECK(templates["resourceTemplates"][0]["uriTemplate"] == "amem://node/{key}");
  CHECK(templates["resourceTemplates"][1]["uriTemplate"] == "amem://kv/{scope}/{ns}/{key}");

  h.Ok("put_memory", {{"key", "file:src/a b.cc"}, {"type", "file"}, {"content", "the file"},
                      {"meta", {{"lang", "c++"}}},
                      {"links", {{{"rel", "part_of"}, {"to", "module:src"}}}}});
  h.Ok("put_memory", {{"key", "decision:x"}, {"type", "decision"},
                      {"links", {{{"rel", "decided_for"}, {"to", "file:src/a b.cc"}}}}});
  h.Ok("remember", {{"namespace", "decisions"}, {"key", "db/engine"}, {"value", "lmdb"}});
  const uint64_t rev = h.Revision();

  Json node = h.ReadDoc("amem://node/file:src/a%20b.cc");
  CHECK(node["node"]["key"] == "file:src/a b.cc");
  CHECK(node["node"]["type"] == "file");
  CHECK(node["node"]["content"] == "the file");
  CHECK(node["node"]["meta"]["lang"] == "c++");
  CHECK(node["node"]["has_vector"] == false);
  CHECK(!node["node"].contains("vector"));
  CHECK(node["out_total"] == 1);
  CHECK(node["in_total"] == 1);
  CHECK(node["revision"] == rev);
  // The node part is get_memory's.
  Json got = h.Ok("get_memory", {{"node", "file:src/a b.cc"}});
  CHECK(node["node"] == got["node"]);

  Json kv = h.ReadDoc("amem://kv/project/decisions/db%2Fengine");
  CHECK(kv["entry"]["value"] == "lmdb");
  CHECK(kv["entry"]["key"] == "db/engine");
  CHECK(kv["revision"] == rev);

  Json stats = h.ReadDoc("amem://stats");
  CHECK(stats == h.Ok("store_stats", Json::object()));
  CHECK(stats["revision"] == rev);
}

TEST_CASE("resources/read errors: not found is -32002, a bad URI -32602, nothing changes",
          "[mcp][resources]") {
  ResourceHarness h;
  h.Ok("put_memory", {{"key", "fact:gone"}, {"type", "fact"}});
  h.Ok("delete_memory", {{"node", "fact:gone"}});
  h.Ok("remember", {{"namespace", "decisions"}, {"key", "k"}, {"value", "v"}});
  h.Ok("forget", {{"namespace", "decisions"}, {"key", "k"}});
  const uint64_t rev = h.Revision();
  for (std::string uri : {"amem://node/fact:nope", "amem://node/fact:gone",
                          "amem://kv/project/decisions/k", "amem://kv/project/decisions/never",
                          "file:///etc/passwd", "amem://edge/a"}) {
    Json e = h.RpcError("resources/read", {{"uri", uri}}, kResourceNotFound);
    CHECK(e["data"]["uri"] == uri);
    CHECK_THAT(e["message"].get<std::string>(), Catch::Contains(uri));
  }
  for (std::string uri : {"", "amem://node/", "amem://node/a%G1", "amem://kv/p/n",
                          "amem://node/a\tb", "amem://node/{key}"}) {
    Json e = h.RpcError("resources/read", {{"uri", uri}}, -32602);
    CHECK(e["data"]["uri"] == uri);
  }
  h.RpcError("resources/read", Json::object(), -32602);
  h.RpcError("resources/read", {{"uri", 7}}, -32602);
  h.RpcError("resources/subscribe", {{"uri", "amem://node/"}}, -32602);
  h.RpcError("resources/subscribe", {{"uri", "http://x"}}, kResourceNotFound);
  h.RpcError("resources/unsubscribe", {{"uri", "amem://kv/a"}}, -32602);
  CHECK(!h.resources.has_subscriptions());
  CHECK(h.Revision() == rev);
  // Without Resources a server knows no resources/* method.
  Harness plain;
  Json r = Json::parse(*plain.server->HandleLine(
      R"({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"amem://stats"}})"));
  CHECK(r["error"]["code"] == -32601);
}

TEST_CASE("subscriptions report the writes that change their resources", "[mcp][resources]") {
  ResourceHarness h;
  h.Ok("put_memory", {{"key", "file:a/b.cc"}, {"type", "file"}});
  h.Ok("put_memory", {{"key", "fact:other"}, {"type", "fact"}});
  auto sub = [&](const std::string& uri) {
    Json r = h.Rpc("resources/subscribe", {{"uri", uri}});
    INFO(DumpLine(r));
    CHECK(r["result"] == Json::object());
  };
  sub("amem://node/file:a/b.cc");
  sub("amem://node/file:a%2Fb.cc");  // the same node, spelt otherwise: both are told
  sub("amem://node/fact:later");     // does not exist yet
  sub("amem://node/fact:quiet");
  sub("amem://kv/project/decisions/engine");
  CHECK(h.resources.CheckForUpdates().empty());  // nothing since subscribing

  h.Ok("put_memory", {{"key", "file:a/b.cc"}, {"type", "file"}, {"content", "new"}});
  CHECK(h.resources.CheckForUpdates() ==
        std::vector<std::string>{"amem://node/file:a%2Fb.cc", "amem://node/file:a/b.cc"});
  CHECK(h.resources.CheckForUpdates().empty());  // each change is told once

  // An edge touching a node changes its edge counts; an unrelated write tells no one.
  h.Ok("link", {{"src", "fact:other"}, {"rel", "supports"}, {"dst", "file:a/b.cc"}});
  h.Ok("put_memory", {{"key", "fact:unrelated"}, {"type", "fact"}});
  CHECK(h.resources.CheckForUpdates().size() == 2);
  h.Ok("put_memory", {{"key", "fact:later"}, {"type", "fact"}});
  h.Ok("remember", {{"namespace", "decisions"}, {"key", "engine"}, {"value", "lmdb"}});
  h.Ok("remember", {{"namespace", "decisions"}, {"key", "other"}, {"value", "x"}});
  CHECK(h.resources.CheckForUpdates() ==
        std::vector<std::string>{"amem://kv/project/decisions/engine", "amem://node/fact:later"});
  sub("amem://stats");
  h.Ok("forget", {{"namespace", "decisions"}, {"key", "engine"}});
  CHECK(h.resources.CheckForUpdates() ==
        std::vector<std::string>{"amem://kv/project/decisions/engine", "amem://stats"});

  // Unsubscribing one spelling ends every subscription of that node.
  CHECK(h.Rpc("resources/unsubscribe", {{"uri", "amem://node/file:a/b.cc"}})["result"] ==
        Json::object());
  h.Ok("delete_memory", {{"node", "file:a/b.cc"}});
  CHECK(h.resources.CheckForUpdates() == std::vector<std::string>{"amem://stats"});
  for (const char* uri : {"amem://stats", "amem://node/fact:later", "amem://node/fact:quiet",
                          "amem://kv/project/decisions/engine"}) {
    h.Rpc("resources/unsubscribe", {{"uri", uri}});
  }
  CHECK(!h.resources.has_subscriptions());
  h.Ok("put_memory", {{"key", "fact:quiet"}, {"type", "fact"}});
  CHECK(h.resources.CheckForUpdates().empty());
}

TEST_CASE("subscriptions whose history was compacted away are all reported",
          "[mcp][resources]") {
  ResourceHarness h;
  h.Ok("put_memory", {{"key", "fact:a"}, {"type", "fact"}});
  h.Rpc("resources/subscribe", {{"uri", "amem://node/fact:a"}});
  h.Rpc("resources/subscribe", {{"uri", "amem://node/fact:b"}});
  h.Ok("put_memory", {{"key", "fact:c"}, {"type", "fact"}});
  h.Ok("put_memory", {{"key", "fact:d"}, {"type", "fact"}});
  CompactOptions compact;
  compact.drop_history_before = h.Revision();
  REQUIRE(h.store->Compact(compact).ok());
  // The changes since the subscriptions are no longer known: each may have changed.
  CHECK(h.resources.CheckForUpdates() ==
        std::vector<std::string>{"amem://node/fact:a", "amem://node/fact:b"});
  CHECK(h.resources.CheckForUpdates().empty());
}

TEST_CASE("a repeated subscribe keeps its place; subscriptions are bounded",
          "[mcp][resources]") {
  ResourceHarness h;
  h.Rpc("resources/subscribe", {{"uri", "amem://node/fact:a"}});
  h.Ok("put_memory", {{"key", "fact:a"}, {"type", "fact"}});
  h.Rpc("resources/subscribe", {{"uri", "amem://node/fact:a"}});  // before the check
  CHECK(h.resources.CheckForUpdates() == std::vector<std::string>{"amem://node/fact:a"});
  for (size_t i = 1; i < kMaxSubscriptions; ++i) {
    Json r = h.Rpc("resources/subscribe", {{"uri", "amem://node/fact:" + std::to_string(i)}});
    REQUIRE(r.contains("result"));
  }
  Json e = h.RpcError("resources/subscribe", {{"uri", "amem://node/fact:one-more"}}, -32602);
  CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("at most 10000 subscriptions"));
  // Subscribing again to one it holds is no new subscription.
  CHECK(h.Rpc("resources/subscribe", {{"uri", "amem://node/fact:a"}})["result"] == Json::object());
  h.Ok("put_memory", {{"key", "fact:one-more"}, {"type", "fact"}});
  CHECK(h.resources.CheckForUpdates().empty());
}

TEST_CASE("Serve sends notifications/resources/updated while it waits for input",
          "[mcp][resources]") {
  ResourceHarness h;
  int in[2], out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  int rc = -1;
  std::thread serving([&] { rc = h.server->Serve(in[0], out[1]); });
  auto send = [&](const Json& msg) {
    std::string line = DumpLine(msg) + "\n";
    REQUIRE(write(in[1], line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  };
  // The next line of output; fails rather than hangs when none comes for 10 s.
  std::string pending;
  auto next_line = [&]() -> Json {
    for (;;) {
      size_t nl = pending.find('\n');
      if (nl != std::string::npos) {
        Json j = Json::parse(pending.substr(0, nl));
        pending.erase(0, nl + 1);
        return j;
      }
      pollfd p{out[0], POLLIN, 0};
      REQUIRE(poll(&p, 1, 10000) == 1);
      char buf[4096];
      ssize_t n = read(out[0], buf, sizeof(buf));
      REQUIRE(n > 0);
      pending.append(buf, static_cast<size_t>(n));
    }
  };
  send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "resources/subscribe"},
        {"params", {{"uri", "amem://node/fact:x"}}}});
  CHECK(next_line()["id"] == 1);
  // A write of this session is a change too.
  send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
        {"params", {{"name", "put_memory"}, {"arguments", {{"key", "fact:x"}, {"type", "fact"}}}}}});
  CHECK(next_line()["id"] == 2);
  Json note = next_line();
  CHECK(note["method"] == "notifications/resources/updated");
  CHECK(note["params"]["uri"] == "amem://node/fact:x");
  CHECK(!note.contains("id"));
  close(in[1]);
  serving.join();
  CHECK(rc == 0);
  close(in[0]);
  close(out[1]);
  close(out[0]);
}
