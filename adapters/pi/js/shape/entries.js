// The entries an extension appends to its session (`pi.appendEntry`), kept
// as pi keeps them: in order, each a custom entry with an id, its parent's
// id, a timestamp, its `customType` and its data (as JSON has it, as pi's
// session file would), for the life of the session (the extension's, from
// `session_start` to `session_shutdown`). `ctx.sessionManager` reads them
// back. The model never sees them, as in pi.

import { uuidv7 } from "@earendil-works/pi-ai";

/** The most entries one session keeps. */
export const MAX_ENTRIES = 10000;

/** The most bytes of JSON one entry's data may take. */
export const MAX_ENTRY_BYTES = 1 << 20;

/**
 * @typedef {{type: "custom", id: string, parentId: string | null, timestamp: string, customType: string, data: unknown}} CustomEntry
 */

/** A session's entries: `append` (pi.appendEntry) and the reads. */
export function createEntries() {
  /** @type {CustomEntry[]} */
  const entries = [];
  const copy = (entry) => (entry === undefined ? undefined : JSON.parse(JSON.stringify(entry)));
  return Object.freeze({
    /**
     * pi.appendEntry(customType, data): the entry's id.
     * @param {string} customType
     * @param {unknown} [data]
     */
    append(customType, data) {
      if (typeof customType !== "string" || customType === "") {
        throw new TypeError("pi.appendEntry needs a customType string");
      }
      const json = data === undefined ? undefined : JSON.stringify(data);
      if (json !== undefined && json.length > MAX_ENTRY_BYTES) {
        throw new RangeError(`pi.appendEntry("${customType}"): its data is over ${MAX_ENTRY_BYTES} bytes of JSON`);
      }
      if (entries.length >= MAX_ENTRIES) {
        throw new RangeError(`pi.appendEntry("${customType}"): the session already holds ${MAX_ENTRIES} entries`);
      }
      /** @type {CustomEntry} */
      const entry = {
        type: "custom",
        id: uuidv7(),
        parentId: entries.at(-1)?.id ?? null,
        timestamp: new Date().toISOString(),
        customType,
        data: json === undefined ? undefined : JSON.parse(json),
      };
      entries.push(entry);
      return entry.id;
    },
    /** Every entry, oldest first (copies: a caller cannot change the session). */
    all: () => entries.map(copy),
    /** @param {string} id */
    get: (id) => copy(entries.find((e) => e.id === id)),
    last: () => copy(entries.at(-1)),
  });
}
