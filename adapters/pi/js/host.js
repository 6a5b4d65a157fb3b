// The host's services as pi's modules read them: the one typed read of
// `globalThis[Symbol.for("yohost.host")]` (`YohostHost` in the host's
// host.d.ts), which the host installs before the flavor's code runs on
// either engine.

/**
 * The host's services, or `undefined` when the host offers none.
 * @returns {YohostHost | undefined}
 */
export function host() {
  return /** @type {YohostHost | undefined} */ (globalThis[Symbol.for("yohost.host")]);
}
