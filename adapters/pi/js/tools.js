// pi's tool factories (`createBashTool`, `createReadToolDefinition`, ...):
// tool definitions with pi's names and parameters whose `execute` runs
// through the host's services, so within the manifest's grants: files
// through `node:fs` (`capabilities.read`/`write`), `bash` through the exec
// service (`capabilities.exec`). `find` and `grep` are not available: the
// agent's own `list_files` and `search` do that.

import { host } from "pi:host";
import { readFileSync, writeFileSync, readdirSync, statSync } from "pi:fs-core";

const resolve = (cwd, path) => {
  const text = String(path ?? ".").replace(/^@/, "");
  return text.startsWith("/") ? text : `${cwd.replace(/\/$/, "")}/${text}`;
};
const textResult = (text, details = {}) => ({ content: [{ type: "text", text }], details });
const object = (properties, required) => ({ type: "object", properties, required });

// What a spawn hook changed of the granted environment: each variable it
// set to another value, and `null` for each one it removed.
function envChanges(granted, env) {
  /** @type {Record<string, string | null>} */
  const changes = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && granted[name] !== value) changes[name] = String(value);
  }
  for (const name of Object.keys(granted)) if (env[name] === undefined) changes[name] = null;
  return changes;
}

function bashDefinition(cwd, options) {
  return {
    name: "bash",
    label: "bash",
    description: "Execute a bash command in the current working directory. Returns stdout and stderr.",
    parameters: object(
      {
        command: { type: "string", description: "Bash command to execute" },
        timeout: { type: "number", description: "Timeout in seconds (optional, no default timeout)" },
      },
      ["command"],
    ),
    async execute(_id, params) {
      const exec = host()?.exec;
      if (typeof exec !== "function") {
        throw new Error("bash is not available: the plugin's plugin.toml does not grant `capabilities.exec = true`");
      }
      // The hook sees the granted environment (what `process.env` holds);
      // what it sets or removes there is changed for the process, which
      // otherwise inherits what `pi.exec`'s processes do.
      const granted = { ...(globalThis.process?.env ?? {}) };
      let spawn = { command: String(params.command), cwd, env: { ...granted } };
      if (typeof options?.spawnHook === "function") spawn = { ...spawn, ...options.spawnHook(spawn) };
      const timeout = typeof params.timeout === "number" && params.timeout > 0 ? params.timeout * 1000 : undefined;
      const env = envChanges(granted, spawn.env ?? {});
      const result = await exec("bash", ["-c", String(spawn.command)], { cwd: spawn.cwd, timeout, env });
      const output = [result.stdout, result.stderr].filter(Boolean).join("");
      if (result.killed) throw new Error(`${output}\n\nCommand timed out`);
      if (result.code !== 0) throw new Error(`${output}\n\nCommand exited with code ${result.code}`);
      return textResult(output === "" ? "(no output)" : output);
    },
  };
}

function readDefinition(cwd) {
  return {
    name: "read",
    label: "read",
    description: "Read the contents of a file. Use offset/limit for large files.",
    parameters: object(
      {
        path: { type: "string", description: "Path to the file to read (relative or absolute)" },
        offset: { type: "number", description: "Line number to start reading from (1-indexed)" },
        limit: { type: "number", description: "Maximum number of lines to read" },
      },
      ["path"],
    ),
    async execute(_id, params) {
      const lines = readFileSync(resolve(cwd, params.path), "utf8").split("\n");
      const start = Math.max(1, params.offset ?? 1) - 1;
      const end = params.limit === undefined ? lines.length : start + params.limit;
      return textResult(lines.slice(start, end).join("\n"));
    },
  };
}

function writeDefinition(cwd) {
  return {
    name: "write",
    label: "write",
    description: "Write content to a file. Creates the file if it does not exist, overwrites it if it does.",
    parameters: object(
      {
        path: { type: "string", description: "Path to the file to write (relative or absolute)" },
        content: { type: "string", description: "Content to write to the file" },
      },
      ["path", "content"],
    ),
    async execute(_id, params) {
      writeFileSync(resolve(cwd, params.path), String(params.content));
      return textResult(`Successfully wrote ${String(params.content).length} characters to ${params.path}`);
    },
  };
}

function editDefinition(cwd) {
  return {
    name: "edit",
    label: "edit",
    description: "Edit a file by replacing exact text. Each oldText must occur exactly once.",
    parameters: object(
      {
        path: { type: "string", description: "Path to the file to edit (relative or absolute)" },
        edits: {
          type: "array",
          items: object({ oldText: { type: "string" }, newText: { type: "string" } }, ["oldText", "newText"]),
        },
      },
      ["path", "edits"],
    ),
    async execute(_id, params) {
      const path = resolve(cwd, params.path);
      let text = readFileSync(path, "utf8");
      const edits = params.edits ?? [{ oldText: params.oldText, newText: params.newText }];
      for (const { oldText, newText } of edits) {
        const count = oldText === "" ? 0 : text.split(oldText).length - 1;
        if (count !== 1) throw new Error(`Could not edit ${params.path}: the text to replace occurs ${count} times, not once`);
        text = text.replace(oldText, () => newText);
      }
      writeFileSync(path, text);
      return textResult(`Successfully replaced ${edits.length} block(s) in ${params.path}.`);
    },
  };
}

function lsDefinition(cwd) {
  return {
    name: "ls",
    label: "ls",
    description: "List directory contents, folders with a trailing /.",
    parameters: object({
      path: { type: "string", description: "Directory to list (default: current directory)" },
      limit: { type: "number", description: "Maximum number of entries to return" },
    }),
    async execute(_id, params) {
      const dir = resolve(cwd, params.path);
      const names = readdirSync(dir)
        .sort()
        .map((name) => (statSync(`${dir}/${name}`).isDirectory() ? `${name}/` : name));
      return textResult(names.slice(0, params.limit ?? 500).join("\n") || "(empty directory)");
    },
  };
}

function unavailableDefinition(name, instead) {
  return (_cwd) => ({
    name,
    label: name,
    description: `${name} (not available in yohost)`,
    parameters: object({}),
    async execute() {
      throw new Error(`pi's \`${name}\` tool is not available in yohost: the agent's own \`${instead}\` does that`);
    },
  });
}

export const createBashToolDefinition = bashDefinition;
export const createReadToolDefinition = readDefinition;
export const createWriteToolDefinition = writeDefinition;
export const createEditToolDefinition = editDefinition;
export const createLsToolDefinition = lsDefinition;
export const createFindToolDefinition = unavailableDefinition("find", "list_files");
export const createGrepToolDefinition = unavailableDefinition("grep", "search");
export const createBashTool = bashDefinition;
export const createReadTool = readDefinition;
export const createWriteTool = writeDefinition;
export const createEditTool = editDefinition;
export const createLsTool = lsDefinition;
export const createFindTool = createFindToolDefinition;
export const createGrepTool = createGrepToolDefinition;
