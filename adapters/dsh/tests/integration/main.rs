//! The DSH adapter's integration tests, one module per concern, in one
//! test binary (one link and one process for all of them).

#[path = "../packages/mod.rs"]
mod packages;
#[path = "../../../../host/tests/support/mod.rs"]
mod support;

mod dsh_node;
mod dsh_tools;
