// The services DSH's host injects, on the Node engine: `shell`, `shellEnv`,
// `jobs`, `fs`, `approval` and `sandboxPolicy`, with the shapes of DSH's
// published service definitions (`@deepseek-ai/dsh-shell`, `dsh-shell-env`,
// `dsh-jobs`, `dsh-fs`, `dsh-user-approval`, `dsh-sandbox-policy`, at
// 0.1.0-rc.8), mapped onto the plugin's grants.
//
// Every process `shell` starts is a child of the plugin's `node` process, so
// it runs in that process's kernel sandbox (its Landlock ruleset, its
// process group, killed with it). Files go through Node's permission model
// and the same kernel sandbox; the service checks the grants first, so a
// denial is reported as DSH reports one.

import { createFs } from "dsh:services/fs";
import { createJobs } from "dsh:services/jobs";
import { createShell, createShellEnv } from "dsh:services/shell";

/** The services, for a plugin whose `settings.host` describes its grants. */
export async function provide(settings, needed) {
  const host = settings.host;
  const entry = settings.entry;
  const mode = host.write.length > 0 ? "workspace-write" : "read-only";
  const workspaceRoot = host.workspace;

  const sandboxPolicy = Object.freeze({
    defaultMode: mode,
    workspaceRoot,
    resolve(request = {}) {
      const sessionId = request.session?.header?.id;
      return { mode: request.mode ?? mode, workspaceRoot, ...(sessionId !== undefined ? { sessionId } : {}) };
    },
    overrideOf: () => undefined,
  });

  const approval = createApproval();
  const shellEnv = createShellEnv();
  const shell = createShell(host, mode, sandboxPolicy);
  const jobs = createJobs();
  const services = { sandboxPolicy, approval, shellEnv, shell, jobs: jobs.service };
  if (needed.includes("fs")) services.fs = await createFs(host, mode, entry);
  return {
    services,
    // A run ended: its jobs end with it.
    finishRun: (runId) => jobs.endOwned((owner) => owner?.id === runId),
    dispose: () => jobs.endOwned(() => true),
  };
}

/**
 * `ctx.approval`: DSH's approval service with no answerer composed, under
 * its `never` policy by default: nobody is asked and every ask is
 * `rejected`. A session switched to `ask` gets DSH's fail-closed
 * `unavailable`. Each ask and its outcome go to the session's log.
 */
function createApproval() {
  const POLICIES = ["ask", "never"];
  let asked = 0;
  const overrideOf = (session) =>
    (session?.events ?? []).filter((e) => e.type === "approval/policy").at(-1)?.data?.policy;
  return Object.freeze({
    config: Object.freeze({ policy: "never" }),
    setPolicy(agent, policy) {
      if (!POLICIES.includes(policy)) throw new Error(`invalid approval policy ${JSON.stringify(policy)}`);
      agent.session.append("approval/policy", { policy });
    },
    overrideOf,
    async request(req) {
      const id = `approval-${++asked}`;
      const session = req?.agent?.session;
      session?.append("approval/asked", {
        id,
        toolName: String(req?.toolName ?? ""),
        ...(req?.callId ? { callId: req.callId } : {}),
        ...(req?.reason ? { reason: String(req.reason) } : {}),
      });
      const outcome = req?.signal?.aborted ? "cancelled" : (overrideOf(session) ?? "never") === "never" ? "rejected" : "unavailable";
      session?.append("approval/decided", { id, outcome });
      return outcome;
    },
  });
}
