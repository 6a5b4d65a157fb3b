// yoagent's built-in tools, shown to pi handlers under pi's names and
// argument shapes: [pi name, yoagent args -> pi input, pi input -> yoagent args].

const same = (args) => ({ ...args });
const BUILTIN_TOOLS = {
  bash: ["bash", same, same],
  read_file: ["read", same, same],
  write_file: ["write", same, same],
  list_files: ["find", same, same],
  edit_file: [
    "edit",
    ({ old_text, new_text, ...rest }) => ({ ...rest, edits: [{ oldText: old_text, newText: new_text }] }),
    ({ edits, oldText, newText, ...rest }) => {
      const list = edits ?? [{ oldText, newText }];
      if (!Array.isArray(list) || list.length !== 1) {
        throw new Error("the handler asked for several replacements in one `edit`; the host's `edit_file` makes exactly one");
      }
      return { ...rest, old_text: list[0].oldText, new_text: list[0].newText };
    },
  ],
  search: [
    "grep",
    ({ include, case_sensitive, ...rest }) => ({
      ...rest,
      ...(include !== undefined && { glob: include }),
      ignoreCase: !case_sensitive,
    }),
    ({ glob, ignoreCase, ...rest }) => ({
      ...rest,
      ...(glob !== undefined && { include: glob }),
      case_sensitive: !ignoreCase,
    }),
  ],
};

/** The name pi handlers see for host tool `tool`. */
export const piName = (tool) => BUILTIN_TOOLS[tool]?.[0] ?? tool;
/** Host tool `tool`'s arguments as pi's input. */
export const piInput = (tool, args) => (BUILTIN_TOOLS[tool] ? BUILTIN_TOOLS[tool][1](args ?? {}) : args);
/** pi's input for host tool `tool` as the host's arguments. */
export const hostArgs = (tool, input) => (BUILTIN_TOOLS[tool] ? BUILTIN_TOOLS[tool][2](input ?? {}) : input);
