// `node:events` (and `events`): `EventEmitter`, the subset pi extensions and
// the adapter's streams, processes and watchers use.

export class EventEmitter {
  #listeners = new Map();
  // Node's bound on listeners before it warns: kept and read back, never
  // enforced (the host prints no such warning).
  #maxListeners = 10;
  setMaxListeners(n) {
    this.#maxListeners = n;
    return this;
  }
  getMaxListeners() {
    return this.#maxListeners;
  }
  prependListener(name, listener) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, []);
    this.#listeners.get(name).unshift(listener);
    return this;
  }
  listeners(name) {
    return [...(this.#listeners.get(name) ?? [])];
  }
  eventNames() {
    return [...this.#listeners.keys()].filter((name) => this.#listeners.get(name).length > 0);
  }
  on(name, listener) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, []);
    this.#listeners.get(name).push(listener);
    return this;
  }
  once(name, listener) {
    const wrapped = (...args) => {
      this.off(name, wrapped);
      listener(...args);
    };
    return this.on(name, wrapped);
  }
  off(name, listener) {
    this.#listeners.set(name, (this.#listeners.get(name) ?? []).filter((l) => l !== listener));
    return this;
  }
  addListener(name, listener) {
    return this.on(name, listener);
  }
  removeListener(name, listener) {
    return this.off(name, listener);
  }
  removeAllListeners(name) {
    if (name === undefined) this.#listeners.clear();
    else this.#listeners.delete(name);
    return this;
  }
  listenerCount(name) {
    return (this.#listeners.get(name) ?? []).length;
  }
  emit(name, ...args) {
    const listeners = [...(this.#listeners.get(name) ?? [])];
    for (const listener of listeners) listener(...args);
    return listeners.length > 0;
  }
}

export default EventEmitter;
