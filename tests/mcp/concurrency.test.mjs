// Several `amem mcp` processes on one store: every write from each is kept. A server
// killed (SIGKILL) in the middle of a call leaves a store that opens, holding the
// whole batch or none of it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { AMEM, amemClient, amemCli, tempDir, call, fullGraph } from "./helpers.mjs";

test("two servers writing concurrently lose nothing", async (t) => {
  const store = join(tempDir(t), "store");
  const a = await amemClient(t, store);
  const b = await amemClient(t, store);
  await call(a, "create_entities", { entities: [{ name: "shared", entityType: "topic", observations: [] }] });
  const N = 20;
  const work = (client, tag) => Array.from({ length: N }, (_, i) => Promise.all([
    call(client, "create_entities", { entities: [{ name: `${tag}-${i}`, entityType: "thing",
                                                   observations: [`made by ${tag}`] }] }),
    call(client, "add_observations", { observations: [{ entityName: "shared",
                                                        contents: [`${tag} note ${i}`] }] }),
    call(client, "remember", { namespace: "decisions", key: `${tag}-${i}`, value: tag }),
    call(client, "put_memory", { key: `fact:${tag}:${i}`, type: "fact", content: tag,
                                 links: [{ rel: "related_to", to: "entity:shared" }] }),
  ]));
  await Promise.all([...work(a, "a"), ...work(b, "b")]);

  const reader = await amemClient(t, store);  // a third process sees everything
  const g = await fullGraph(reader);
  assert.equal(g.entities.length, 2 * N + 1);
  const shared = g.entities.find((e) => e.name === "shared");
  assert.equal(shared.observations.length, 2 * N);
  const kv = await call(reader, "recall", { namespace: "decisions", limit: 1000 });
  assert.equal(kv.entries.length, 2 * N);
  const stats = amemCli(store, "stats");
  // entities, their observations, the shared entity's observations, facts
  assert.equal(stats.live_nodes, (2 * N + 1) + 2 * N + 2 * N + 2 * N);
});

// Starts `amem mcp`, sends one big write_batch, kills the server after `delayMs`.
function killMidCall(store, ops, delayMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(AMEM, ["--store", store, "mcp", "--tools", "all"], { stdio: ["pipe", "pipe", "ignore"] });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve(signal));
    child.stdin.on("error", () => {});  // killed while we were still writing
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call",
                                       params: { name: "write_batch", arguments: { operations: ops } } }) + "\n");
    setTimeout(() => child.kill("SIGKILL"), delayMs);
  });
}

test("a server killed mid-call leaves the store intact", async (t) => {
  const store = join(tempDir(t), "store");
  const client = await amemClient(t, store);
  await call(client, "put_memory", { key: "fact:before", type: "fact", content: "kept" });
  const M = 3000;
  let kept = 1;
  for (const [round, delay] of [5, 20, 60, 150].entries()) {
    const ops = Array.from({ length: M }, (_, i) => ({
      op: "node", key: `fact:r${round}:${i}`, type: "fact", content: `round ${round} item ${i}` }));
    await killMidCall(store, ops, delay);
    const stats = amemCli(store, "stats");  // opens and reads after the kill
    const added = stats.live_nodes - kept;
    assert.ok(added === 0 || added === M, `round ${round}: ${added} of ${M} nodes (all or nothing)`);
    kept = stats.live_nodes;
  }
  // Servers still work on the store afterwards.
  const again = await amemClient(t, store);
  assert.equal((await call(again, "get_memory", { node: "fact:before" })).node.content, "kept");
  await call(again, "put_memory", { key: "fact:after", type: "fact", content: "ok" });
});
