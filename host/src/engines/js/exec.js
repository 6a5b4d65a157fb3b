// `exec` on the embedded engine: the plugin's call (`YohostHost["exec"]` in
// host.d.ts) turned into the host function that starts the process
// (`ExecStart`, runtime/host.rs): the arguments and the environment go as
// JSON texts and absent options as `null`, and the driver's `later` makes
// it a promise of the process's end.
//
// Evaluated by the host as a function of `later` and `start`; it returns
// the plugin's `exec`.
(/** @param {Driver["later"]} later @param {ExecStart} start @returns {NonNullable<YohostHost["exec"]>} */ function (later, start) {
  "use strict";
  return later(
    /** @type {(command: string, args: string[], options?: ExecOptions) => string} */ (
      (command, args, options) =>
        start(
          command,
          JSON.stringify(args),
          options?.cwd ?? null,
          options?.timeout == null ? null : Number(options.timeout),
          options?.env == null ? null : JSON.stringify(options.env),
        )
    ),
  );
})
