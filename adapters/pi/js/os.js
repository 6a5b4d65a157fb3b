// `node:os` (and `os`) for pi extensions: a read-only subset. Nothing
// here reaches the machine beyond what the host tells every pi extension.

import { settings } from "pi:settings";

export const EOL = "\n";
export const homedir = () => settings.home;
export const tmpdir = () => settings.tmp;
export const platform = () => settings.platform;
export const arch = () => settings.arch;
export const type = () => ({ linux: "Linux", darwin: "Darwin", win32: "Windows_NT" })[settings.platform] ?? settings.platform;
export const release = () => "";
export const hostname = () => "localhost";
export const endianness = () => "LE";
export const cpus = () => [];
export const availableParallelism = () => 1;
export const totalmem = () => 0;
export const freemem = () => 0;
export const uptime = () => 0;
export const loadavg = () => [0, 0, 0];
export const networkInterfaces = () => ({});
export const userInfo = () => ({ username: "", uid: -1, gid: -1, shell: null, homedir: settings.home });
export const constants = Object.freeze({ signals: Object.freeze({}), errno: Object.freeze({}) });

export default { EOL, homedir, tmpdir, platform, arch, type, release, hostname, endianness, cpus, availableParallelism, totalmem, freemem, uptime, loadavg, networkInterfaces, userInfo, constants };
