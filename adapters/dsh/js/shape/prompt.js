// `ctx.systemPrompt`: sections become one note before each model request,
// ordered by `order` (then name), each cut at MAX_SECTION characters and the
// whole note at MAX_NOTE.

/** The longest a section's text may be. */
export const MAX_SECTION = 8 * 1024;
/** The longest the note of all sections may be. */
export const MAX_NOTE = 32 * 1024;

const CUT = "\n[cut by yohost]";

function cap(text, limit, what, warn) {
  if (text.length <= limit) return text;
  warn(`${what} is ${text.length} characters, over the limit of ${limit}: it is cut`);
  return text.slice(0, limit - CUT.length) + CUT;
}

/** The `systemPrompt` service, and the note its sections make. */
export function createPrompt(warn) {
  const sections = new Map();
  const service = Object.freeze({
    section(section) {
      if (section === null || typeof section !== "object" || typeof section.name !== "string") {
        throw new TypeError("systemPrompt.section needs `{name, order, text}`");
      }
      if (!Number.isFinite(section.order)) throw new TypeError(`prompt section "${section.name}" order must be a finite number`);
      if (typeof section.text !== "string") throw new TypeError(`prompt section "${section.name}" text must be a string`);
      if (sections.has(section.name)) throw new Error(`prompt section "${section.name}" is already registered`);
      const entry = { name: section.name, order: section.order, text: cap(section.text, MAX_SECTION, `prompt section "${section.name}"`, warn) };
      sections.set(section.name, entry);
      return () => {
        if (sections.get(section.name) === entry) sections.delete(section.name);
      };
    },
  });
  const note = () => {
    const text = [...sections.values()]
      .sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((s) => s.text.trim())
      .filter((t) => t.length > 0)
      .join("\n\n");
    return text.length === 0 ? null : cap(text, MAX_NOTE, "the prompt sections together", warn);
  };
  return { service, note, has: () => sections.size > 0 };
}
