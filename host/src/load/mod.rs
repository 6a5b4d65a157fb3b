//! Loading a plugin: reading its files within bounds, private copies of
//! libraries, the manifest, discovery of a plugin directory, file grants,
//! each plugin's data folder,
//! the Node routing of `engine = "auto"`, the adapter registry every
//! engine and adapter is reached through, and the registry of the plugins
//! loaded from a directory, snapshot by snapshot. It names no engine: engines and
//! adapters come in through [`Adapter`](crate::adapter::Adapter).

pub mod adapter;
pub mod data_dir;
pub mod discovery;
pub(crate) mod error;
pub mod fingerprint;
pub mod grants;
pub(crate) mod listing;
pub(crate) mod loaded;
pub mod lockfile;
pub mod manifest;
pub mod private_dir;
pub(crate) mod registry;
pub(crate) mod routing;
pub mod source;
