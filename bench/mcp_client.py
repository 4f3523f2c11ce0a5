"""One `amem mcp` session for the benchmark clients: start, initialize, timed calls."""
import json
import subprocess
import sys
import time


class Session:
    """Starts `AMEM --store STORE mcp` (env: its environment) and initializes it."""

    def __init__(self, amem, store, client, env=None):
        self.proc = subprocess.Popen([amem, "--store", store, "mcp", "--tools", "all"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env)
        self.next_id = 0
        self.client = client
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": client, "version": "1"}})
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0",
                                          "method": "notifications/initialized"}) + "\n")

    def call(self, method, params):
        """The round trip in milliseconds, from the request's write to the response's
        read (what an MCP client sees). An error reply exits with status 1."""
        return self.call_reply(method, params)[0]

    def call_reply(self, method, params):
        """As call, with the reply's result: (milliseconds, result)."""
        self.next_id += 1
        start = time.perf_counter()
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                                          "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        ms = (time.perf_counter() - start) * 1000
        if "error" in reply or reply.get("result", {}).get("isError"):
            sys.exit("%s: %s failed: %s" % (self.client, method, json.dumps(reply)[:300]))
        return ms, reply["result"]

    def tool(self, name, arguments):
        return self.call("tools/call", {"name": name, "arguments": arguments})

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
