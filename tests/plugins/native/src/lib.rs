//! Nothing: the guests are the examples of this crate.
