// What the adapter's Rust side tells its modules: the platform, the
// per-user folder behind `getAgentDir`, the pi version the adapter
// follows. Filled by the prelude (`pi:globals`) before any extension code
// runs; read-only afterwards.

export const settings = {};
