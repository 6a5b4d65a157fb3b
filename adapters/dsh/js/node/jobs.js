// DSH's `jobs` service on the Node engine (see services.js): background
// work, owned by the run that started it and ended with it.

/** How long a run's end waits for its background jobs to exit, in ms. */
const JOB_END_GRACE_MS = 1000;

/** `ctx.jobs`: background work, owned by the run that started it. */
export function createJobs() {
  const jobs = new Map();
  const counters = new Map();
  const doneListeners = new Set();
  const changedListeners = new Set();
  const contained = (listener, ...args) => {
    try {
      const r = listener(...args);
      if (r && typeof r.then === "function") r.then(undefined, (e) => console.error("a jobs listener failed:", e));
    } catch (e) {
      console.error("a jobs listener failed:", e);
    }
  };
  const changed = (owner) => {
    for (const l of [...changedListeners]) contained(l, owner);
  };
  const snapshot = (job) =>
    Object.freeze({
      id: job.id,
      kind: job.kind,
      label: job.label,
      ...(job.outputLimitBytes !== undefined ? { outputLimitBytes: job.outputLimitBytes } : {}),
      ...(job.owner !== undefined ? { ownerSession: job.owner.session?.header?.id } : {}),
      status: job.status,
      ...(job.detail !== undefined ? { detail: job.detail } : {}),
      startedAt: job.startedAt,
      ...(job.finishedAt !== undefined ? { finishedAt: job.finishedAt } : {}),
      reported: job.reported,
    });
  const visible = (job, caller) => job.owner === undefined || job.owner.session?.header?.id === caller?.session?.header?.id;
  const find = (id, caller) => {
    const job = jobs.get(String(id));
    if (job === undefined || !visible(job, caller)) throw new Error(`no job ${String(id)}`);
    return job;
  };
  const settle = (job, outcome) => {
    if (job.finishedAt !== undefined) return;
    job.status = outcome.status;
    job.detail = outcome.detail;
    job.finalOutput = outcome.output;
    job.finishedAt = Date.now();
    for (const w of job.waiters.splice(0)) w();
    changed(job.owner);
    for (const l of [...doneListeners]) contained(l, snapshot(job), job.owner);
  };

  const registry = {
    start(spec) {
      if (spec === null || typeof spec !== "object" || typeof spec.run !== "function") throw new TypeError("jobs.start needs `{kind, label, run}`");
      const kind = String(spec.kind);
      const n = (counters.get(kind) ?? 0) + 1;
      const hooks = spec.run();
      counters.set(kind, n);
      const job = {
        id: `${kind}-${n}`,
        kind,
        label: String(spec.label ?? ""),
        outputLimitBytes: spec.outputLimitBytes,
        owner: spec.owner,
        status: "running",
        startedAt: Date.now(),
        reported: false,
        hooks,
        waiters: [],
      };
      jobs.set(job.id, job);
      job.settled = Promise.resolve(hooks.done).then(
        (outcome) => settle(job, outcome ?? { status: "completed" }),
        (e) => settle(job, { status: "failed", detail: String(e?.message ?? e) }),
      );
      changed(job.owner);
      return job.id;
    },
    list: (caller) => [...jobs.values()].filter((j) => visible(j, caller)).map(snapshot),
    get: (id, caller) => snapshot(find(id, caller)),
    read(id, caller) {
      const job = find(id, caller);
      let output = typeof job.hooks.readOutput === "function" ? job.hooks.readOutput() : "";
      if (job.finishedAt !== undefined) {
        if (job.finalOutput !== undefined && typeof job.hooks.readOutput !== "function") output = job.finalOutput;
        job.reported = true;
      }
      return { output, snapshot: snapshot(job) };
    },
    kill(id, caller, reason) {
      const job = find(id, caller);
      if (job.finishedAt !== undefined) return "already-finished";
      job.hooks.cancel(reason);
      job.status = "stopping";
      job.reported = true;
      changed(job.owner);
      return "requested";
    },
    async wait(id, timeoutMs, caller, signal) {
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new Error("jobs.wait needs a positive finite timeout");
      const job = find(id, caller);
      if (job.finishedAt === undefined) {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, timeoutMs);
          job.waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
          signal?.addEventListener("abort", () => job.finishedAt === undefined && reject(signal.reason), { once: true });
        });
      }
      return snapshot(job);
    },
    onJobDone(listener) {
      doneListeners.add(listener);
      return () => void doneListeners.delete(listener);
    },
    onJobsChanged(listener) {
      changedListeners.add(listener);
      return () => void changedListeners.delete(listener);
    },
    // The host is the controller of every job (it ends them with their run),
    // so a controller attached by the plugin changes nothing.
    attachController: () => () => {},
  };

  // Cancel the live jobs `owned` selects, and wait (bounded) for them.
  async function endOwned(owned) {
    const ending = [...jobs.values()].filter((job) => owned(job.owner));
    for (const job of ending) {
      job.reported = true;
      if (job.finishedAt === undefined) {
        try {
          job.hooks.cancel("the run ended");
        } catch (e) {
          settle(job, { status: "failed", detail: `cancel failed: ${e?.message ?? e}` });
        }
      }
    }
    const all = Promise.all(ending.map((job) => job.settled));
    await Promise.race([all, new Promise((r) => setTimeout(r, JOB_END_GRACE_MS))]);
    for (const job of ending) jobs.delete(job.id);
    if (ending.length > 0) changed(undefined);
  }

  return { service: Object.freeze(registry), endOwned };
}
