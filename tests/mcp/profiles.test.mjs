// Tool profiles through the official SDK client (docs/MCP.md "Profiles"): what each
// lists and calls, the JSON-RPC error for a tool outside it, AMEM_MCP_TOOLS, and
// an unknown name refused at start.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { AMEM, amemClient, tempDir } from "./helpers.mjs";

const MEMORY = ["create_entities", "create_relations", "add_observations", "delete_entities",
  "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"];
const BUDGET = { agent: 12000, memory: 12000, all: 32000 };

// The tools/list result's bytes as the client received it, and its names.
async function listed(client) {
  const result = await client.listTools();
  return { names: result.tools.map((x) => x.name), bytes: Buffer.byteLength(JSON.stringify(result)) };
}

test("the default profile is agent: at most 12 tools within 12,000 bytes", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"), [], null);
  const { names, bytes } = await listed(client);
  assert.ok(names.length <= 12, names.join(","));
  assert.ok(bytes <= BUDGET.agent, `${bytes} bytes`);
  for (const need of ["remember", "recall", "put_memory", "get_memory", "context", "hybrid_search", "impact", "write_batch"]) {
    assert.ok(names.includes(need), need);
  }
  assert.ok(client.getInstructions().length <= 1200);
  const w = await client.callTool({ name: "remember", arguments: { namespace: "decisions", key: "db", value: "lmdb: one writer, many readers" } });
  assert.equal(w.isError, false);
  const c = await client.callTool({ name: "context", arguments: { question: "lmdb writer" } });
  assert.equal(c.isError, false);
  // A tool outside the profile: a JSON-RPC error (-32602) that says how to enable it.
  await assert.rejects(client.callTool({ name: "read_graph", arguments: {} }), (e) => {
    assert.equal(e.code, -32602);
    assert.match(e.message, /read_graph is not in this server's profile agent/);
    assert.match(e.message, /--tools all/);
    return true;
  });
});

test("each profile lists its tools within budget and refuses the others", async (t) => {
  for (const [profile, outside] of [["memory", "put_memory"], ["agent", "create_entities"], ["all", null]]) {
    const client = await amemClient(t, join(tempDir(t), "store"), [], profile);
    const { names, bytes } = await listed(client);
    assert.ok(bytes <= BUDGET[profile], `${profile}: ${bytes} bytes`);
    if (profile === "memory") assert.deepEqual(names, MEMORY);
    if (profile === "all") for (const n of MEMORY) assert.ok(names.includes(n), n);
    if (outside) {
      assert.ok(!names.includes(outside));
      await assert.rejects(client.callTool({ name: outside, arguments: {} }), (e) => e.code === -32602 &&
        e.message.includes(`${outside} is not in this server's profile ${profile}`));
    }
  }
  // The memory profile is the official server's drop-in: its calls work as there.
  const client = await amemClient(t, join(tempDir(t), "store"), [], "memory");
  const r = await client.callTool({ name: "create_entities", arguments: { entities: [{ name: "a", entityType: "t", observations: ["x"] }] } });
  assert.equal(r.isError, false);
  const g = await client.callTool({ name: "open_nodes", arguments: { names: ["a"] } });
  assert.equal(g.structuredContent.entities[0].observations[0], "x");
});

test("AMEM_MCP_TOOLS selects the profile; --tools wins", async (t) => {
  let client = await amemClient(t, join(tempDir(t), "store"), [], null, { AMEM_MCP_TOOLS: "memory" });
  assert.deepEqual((await listed(client)).names, MEMORY);
  client = await amemClient(t, join(tempDir(t), "store"), [], "impact,context", { AMEM_MCP_TOOLS: "memory" });
  assert.deepEqual((await listed(client)).names, ["impact", "context"]);
});

test("an unknown tool or profile is refused at start with the valid names", (t) => {
  const dir = tempDir(t);
  for (const [args, env, where] of [[["--tools", "agnet"], {}, "--tools"], [[], { AMEM_MCP_TOOLS: "nope" }, "AMEM_MCP_TOOLS"]]) {
    const r = spawnSync(AMEM, ["--store", join(dir, "store"), "mcp", ...args],
      { input: "", encoding: "utf8", env: { ...process.env, ...env } });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, new RegExp(`${where}: unknown tool or profile`));
    assert.match(r.stderr, /valid profiles: agent memory all/);
  }
});
