// A scripted agent session against `s-code mcp` on the official TypeScript SDK client:
// plan, discover, read, patch with the revision just read, run the workspace's tests through
// the user helper (approved by elicitation), a declined command that must not run, a second
// command that must be asked about again (one approval, one command), and git diff.
//
// Usage: node session.mjs WORKSPACE -- COMMAND [ARG...]
// Prints one line per step and exits 1 on the first failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync } from "node:fs";
import { join } from "node:path";

const dash = process.argv.indexOf("--");
const workspace = process.argv[2];
const [command, ...args] = process.argv.slice(dash + 1);
if (dash < 0 || !workspace || !command) {
  console.error("usage: node session.mjs WORKSPACE -- COMMAND [ARG...]");
  process.exit(2);
}

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL: ${what}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const answers = []; // actions for the next elicitations, in order
const asked = [];
const client = new Client({ name: "s-code-ts-session", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: answers.shift() ?? "decline" };
});
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
await client.connect(transport);

async function call(name, a) {
  const res = await client.callTool({ name, arguments: a });
  return { isError: !!res.isError, out: res.structuredContent ?? JSON.parse(res.content[0].text) };
}

const version = client.getServerVersion();
check(version?.name === "s-code", "server is s-code", version);
check(client.getInstructions()?.includes("read_file"), "instructions at initialization", client.getInstructions());

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
for (const n of ["update_plan", "list_dir", "glob", "grep", "read_file", "apply_patch", "exec_command", "git_diff", "undo_turn", "tool_search"]) {
  check(names.includes(n), `tools/list has ${n}`, names);
}
check(!names.includes("audit_query"), "deferred tools are not listed", names);

let r = await call("update_plan", { plan: [
  { step: "find the greeting", status: "in_progress" },
  { step: "change it", status: "pending" },
  { step: "run the tests", status: "pending" },
] });
check(!r.isError && r.out.counts.in_progress === 1, "update_plan keeps the plan", r);

r = await call("glob", { pattern: "**/*.txt", sort: "path" });
check(r.out.matches.some((m) => m.path === "main.txt"), "glob finds main.txt", r);
r = await call("grep", { pattern: "^hello$" });
check(r.out.matches.length === 1 && r.out.matches[0].path === "main.txt", "grep finds the line", r);
r = await call("list_dir", {});
check(!r.out.entries.some((e) => e.path.endsWith(".log")), "list_dir leaves ignored files out", r);

r = await call("read_file", { path: "main.txt" });
check(r.out.numbered_content === "     1\thello\n" && r.out.revision.length === 16, "read_file", r);
const rev = r.out.revision;
r = await call("apply_patch", { files: [{ path: "main.txt", expected_revision: rev, edits: [{ start_line: 1, end_line: 1, new_text: "hello, world\n" }] }] });
check(!r.isError && r.out.applied[0].path === "main.txt", "apply_patch with the revision just read", r);
r = await call("apply_patch", { files: [{ path: "main.txt", expected_revision: rev, edits: [{ start_line: 1, end_line: 1, new_text: "again\n" }] }] });
check(r.isError && r.out.code === "stale_revision", "the old revision is stale now", r);

answers.push("accept");
r = await call("exec_command", { command: "bash test.sh" });
check(asked.length === 1 && asked[0].includes("command:   bash test.sh"), "the tests needed approval (elicitation with the card)", asked);
check(r.out.ran && r.out.exit_status === 0 && r.out.stdout === "tests pass\n" && r.out.request_id, "accepted: the tests ran through the helper", r);

answers.push("decline");
r = await call("exec_command", { command: "touch declined.txt" });
check(asked.length === 2, "a second command is asked about again", asked);
check(!r.out.ran && r.out.exit_status === 126 && r.out.denied.rule === "write.workspace", "declined: nothing ran, the rule is named", r);
check(!existsSync(join(workspace, "declined.txt")), "declined.txt does not exist", workspace);

answers.push("cancel");
r = await call("exec_command", { command: "bash test.sh" });
check(asked.length === 3 && !r.out.ran && r.out.approval === "cancel", "an earlier approval does not carry over (asked again, cancelled, not run)", r);

r = await call("git_diff", {});
check(r.out.patch.includes("+hello, world"), "git_diff shows the change", r);

r = await call("tool_search", { query: "audit log records" });
check(r.out.tools[0]?.name === "audit_query", "tool_search finds audit_query", r);
const after = (await client.listTools()).tools.map((t) => t.name);
check(after.includes("audit_query"), "the found tool is loaded", after);
r = await call("audit_query", { text: "test.sh" });
check(r.out.records.some((x) => x.command === "bash test.sh"), "the audit log holds the approved run", r);

await client.close();
console.log("session passed");
