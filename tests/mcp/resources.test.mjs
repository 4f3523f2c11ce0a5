// The store as MCP resources through the official SDK client: templates, reads, and
// subscriptions told of writes by another process (docs/MCP.md "Resources").
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { AMEM, amemClient, amemCli, tempDir } from "./helpers.mjs";

const nodeUri = (key) => "amem://node/" + encodeURIComponent(key);
// A write by a separate `amem` process.
const cli = (store, ...args) => execFileSync(AMEM, ["--store", store, ...args], { encoding: "utf8" });
const readJson = async (client, uri) => {
  const r = await client.readResource({ uri });
  assert.equal(r.contents.length, 1);
  assert.equal(r.contents[0].uri, uri);
  assert.equal(r.contents[0].mimeType, "application/json");
  return JSON.parse(r.contents[0].text);
};

// The notifications/resources/updated a client receives, and a wait for the next one
// (failing after `ms`, so a lost notification fails the test instead of hanging it).
function watch(client) {
  const seen = [];
  let wake = null;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.push(n.params.uri);
    if (wake) wake();
  });
  return {
    seen,
    async next(ms = 15000) {
      const start = seen.length;
      const deadline = Date.now() + ms;
      while (seen.length === start) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no notifications/resources/updated within ${ms} ms`);
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => { clearTimeout(timer); resolve(); };
        });
        wake = null;
      }
      return seen[start];
    },
  };
}

test("resources: templates, reads and errors through the SDK client", async (t) => {
  const store = join(tempDir(t), "store");
  cli(store, "init");
  cli(store, "put-node", "file:src/a b.cc", "--type", "file", "--content", "v1");
  cli(store, "kv-put", "project", "decisions", "db/engine", "lmdb");
  const client = await amemClient(t, store, [], null);  // the default profile serves them too
  assert.deepEqual(client.getServerCapabilities().resources, { subscribe: true, listChanged: false });
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri), ["amem://stats"]);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate),
                   ["amem://node/{key}", "amem://kv/{scope}/{ns}/{key}"]);

  const node = await readJson(client, nodeUri("file:src/a b.cc"));
  assert.equal(node.node.key, "file:src/a b.cc");
  assert.equal(node.node.content, "v1");
  const kv = await readJson(client, "amem://kv/project/decisions/" + encodeURIComponent("db/engine"));
  assert.equal(kv.entry.value, "lmdb");
  const stats = await readJson(client, "amem://stats");
  assert.equal(stats.revision, amemCli(store, "stats").revision);

  await assert.rejects(client.readResource({ uri: nodeUri("file:none") }),
                       (e) => e.code === -32002 && /file:none/.test(e.message));
  await assert.rejects(client.readResource({ uri: "amem://node/a%zz" }),
                       (e) => e.code === -32602 && /bad percent-encoding/.test(e.message));
});

test("a subscribed node is told of another process's writes, an unsubscribed one is not",
     async (t) => {
  const store = join(tempDir(t), "store");
  cli(store, "init");
  for (const key of ["file:src/a.cc", "file:src/b.cc", "file:src/c.cc"]) {
    cli(store, "put-node", key, "--type", "file", "--content", "v1");
  }
  const client = await amemClient(t, store, [], null);
  const updates = watch(client);
  const watched = nodeUri("file:src/a.cc");
  await client.subscribeResource({ uri: watched });
  await client.subscribeResource({ uri: nodeUri("file:src/b.cc") });
  await client.unsubscribeResource({ uri: nodeUri("file:src/b.cc") });
  const entry = "amem://kv/project/decisions/engine";
  await client.subscribeResource({ uri: entry });

  cli(store, "put-node", "file:src/a.cc", "--type", "file", "--content", "v2");
  assert.equal(await updates.next(), watched);
  assert.equal((await readJson(client, watched)).node.content, "v2");

  cli(store, "kv-put", "project", "decisions", "engine", "lmdb");
  assert.equal(await updates.next(), entry);

  // Writes to the unsubscribed b.cc and the never subscribed c.cc, then one to a.cc:
  // a notification for either of them would come before or with a.cc's.
  cli(store, "put-node", "file:src/b.cc", "--type", "file", "--content", "v2");
  cli(store, "put-edge", "file:src/c.cc", "part_of", "module:src");
  cli(store, "put-node", "file:src/a.cc", "--type", "file", "--content", "v3");
  assert.equal(await updates.next(), watched);
  assert.deepEqual(updates.seen, [watched, entry, watched]);

  // An edge entering the node changes its edge counts: told too.
  cli(store, "put-edge", "decision:x", "decided_for", "file:src/a.cc");
  assert.equal(await updates.next(), watched);
  assert.equal((await readJson(client, watched)).in_total, 1);
});
