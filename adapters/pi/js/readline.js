// `node:readline` (and `readline`): `createInterface` over an input stream
// (such as `fs.createReadStream`), read line by line with `for await` or
// `line` events. There is no terminal: `question` rejects.

import { EventEmitter } from "node:events";

class Interface extends EventEmitter {
  #input;
  #closed = false;
  constructor(input) {
    super();
    this.#input = input;
    Promise.resolve().then(() => this.#pump());
  }
  async *#lines() {
    let rest = "";
    for await (const chunk of this.#input) {
      rest += typeof chunk === "string" ? chunk : chunk.toString("utf8");
      const lines = rest.split(/\r?\n/);
      rest = lines.pop();
      yield* lines;
    }
    if (rest !== "") yield rest;
  }
  async #pump() {
    if (this.listenerCount("line") === 0) return;
    try {
      for await (const line of this.#lines()) {
        if (this.#closed) return;
        this.emit("line", line);
      }
    } catch (error) {
      this.emit("error", error);
    }
    this.close();
  }
  [Symbol.asyncIterator]() {
    const lines = this.#lines();
    const close = () => this.close();
    return {
      next: async () => {
        const step = await lines.next();
        if (step.done) close();
        return step;
      },
      return: async () => {
        close();
        return lines.return();
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
  question(_query, callback) {
    const error = new Error("readline.question is not available in yohost: a plugin has no terminal");
    if (typeof callback === "function") throw error;
    return Promise.reject(error);
  }
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.emit("close");
  }
}

export function createInterface(options) {
  const input = options?.input ?? options;
  if (!input || typeof input[Symbol.asyncIterator] !== "function") {
    throw new TypeError("readline.createInterface needs an `input` stream that can be read with `for await`");
  }
  return new Interface(input);
}

export default { createInterface };
