// An in-process `amem mcp` for tests: a store in a temporary directory, every tool
// registered (BuildRegistry), and tools/call requests through the protocol core.
#ifndef AMEM_TESTS_MCP_TOOL_HARNESS_H_
#define AMEM_TESTS_MCP_TOOL_HARNESS_H_

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "store/store.h"
#include "tests/store/store_test_util.h"  // TempDir
#include "tools/mcp/memory_tools.h"
#include "tools/mcp/server.h"

namespace amem::mcp::testing {

struct Harness {
  Harness() {
    auto s = Store::Open(dir / "store");
    REQUIRE(s.ok());
    store = std::move(*s);
    ctx.store = store.get();
    ctx.export_dir = std::filesystem::canonical(dir.path()).string();
    registry = BuildRegistry(&ctx);
    server = std::make_unique<Server>(&registry);
  }
  ~Harness() {
    server.reset();
    store.reset();
  }
  Json Call(const std::string& tool, const Json& args) {
    Json req{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "tools/call"},
             {"params", {{"name", tool}, {"arguments", args}}}};
    auto line = server->HandleLine(DumpLine(req));
    REQUIRE(line);
    last_bytes = line->size();
    Json r = Json::parse(*line);
    REQUIRE(r.contains("result"));
    return r["result"];
  }
  Json Ok(const std::string& tool, const Json& args) {
    Json r = Call(tool, args);
    INFO(tool << " " << DumpLine(args) << " -> " << DumpLine(r));
    REQUIRE(r["isError"] == false);
    REQUIRE(r["structuredContent"].is_object());
    REQUIRE(r["content"][0]["type"] == "text");
    return r["structuredContent"];
  }
  // The error text of a call that must fail.
  std::string Error(const std::string& tool, const Json& args) {
    Json r = Call(tool, args);
    INFO(tool << " " << DumpLine(args) << " -> " << DumpLine(r));
    REQUIRE(r["isError"] == true);
    return r["content"][0]["text"].get<std::string>();
  }
  amem::testing::TempDir dir;
  std::unique_ptr<Store> store;
  ToolContext ctx;
  ToolRegistry registry;
  std::unique_ptr<Server> server;
  int id = 0;
  size_t last_bytes = 0;  // of the last response line
};

}  // namespace amem::mcp::testing

#endif  // AMEM_TESTS_MCP_TOOL_HARNESS_H_
