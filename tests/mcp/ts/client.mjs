// A lanser MCP session through the official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package-lock.json), as Claude Code, VS Code and Cursor run one: list the tools (the SDK checks
// the result against the MCP schema and compiles every outputSchema with Ajv), call reads, a
// write preview and a batch (the SDK validates each structuredContent against its tool's
// outputSchema), follow progress, cancel a call, set the log level, ask for completions,
// prompts and resources. Prints one JSON report on stdout; tests/mcp/test_typescript.py reads it.
//
//   node client.mjs stdio LANSER_BIN WORKSPACE
//   node client.mjs http URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({
        command: rest[0],
        args: ["mcp", "--workspace", rest[1]],
        env: process.env,
        stderr: "inherit",
      })
    : new StreamableHTTPClientTransport(new URL(rest[0]));

const client = new Client({ name: "lanser-ts-test", version: "1.0.0" });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
await client.connect(transport);

const report = { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
const listed = await client.listTools();
report.tools = listed.tools.map((t) => t.name);
report.listBytes = JSON.stringify(listed).length;
report.modelFacing = Object.fromEntries(
  listed.tools.map((t) => [
    t.name,
    JSON.stringify({ name: t.name, description: t.description, inputSchema: t.inputSchema }).length,
  ]),
);

await client.setLoggingLevel("debug");

// One call: its result (validated by the SDK against the tool's outputSchema) and the progress
// notifications it received.
async function call(name, args, options = {}) {
  const progress = [];
  const r = await client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => progress.push(p),
    timeout: 600_000,
    ...options,
  });
  return { isError: r.isError ?? false, structured: r.structuredContent, text: r.content?.[0]?.text, progress };
}

report.calls = {};
report.calls.definition = await call("definition", { file: "cli.py", line: 17, symbol: "add_item" });
report.calls.references = await call("references", { selector: "cli.py@L17:add_item" });
report.calls.edit = await call("edit", {
  file: "cli.py",
  line: 14,
  symbol: "build_store",
  mode: "replace_body",
  text: "return Store()\n",
});
report.calls.batch = await call("batch", {
  requests: [
    { cmd: "def", selector: "cli.py@L17:add_item" },
    { cmd: "hover", selector: "cli.py@L17:add_item" },
  ],
});

// Cancel: a whole-workspace diagnostics call aborted at once rejects in the client, and the
// server answers the next call.
const abort = new AbortController();
const cancelled = client
  .callTool({ name: "diagnostics", arguments: {} }, undefined, { signal: abort.signal })
  .then(
    () => "answered",
    (e) => `rejected: ${e.name}`,
  );
abort.abort();
report.cancel = await cancelled;
report.afterCancel = await call("hover", { selector: "cli.py@L17:add_item" });

report.completions = {};
for (const value of ["cl", "inventory/", "py://inventory.st", "py://inventory.store#Store.", "cli.py@L1"]) {
  const r = await client.complete({
    ref: { type: "ref/prompt", name: "rename_safely" },
    argument: { name: "selector", value },
  });
  report.completions[value] = r.completion.values;
}
report.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
const prompt = await client.getPrompt({ name: "rename_safely", arguments: { selector: "cli.py@L17:add_item", new_name: "put" } });
report.promptText = prompt.messages.map((m) => m.content.text).join("\n");
report.resourceTemplates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
const outline = await client.readResource({ uri: "lanser://outline/cli.py" });
report.outline = outline.contents[0];
report.logs = logs;

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
