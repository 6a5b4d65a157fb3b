//! The pi adapter's integration tests, one module per concern, in one test
//! binary (one link and one process for all of them). The file-watch test,
//! which counts the process's threads and watches, is a binary of its own.

#[path = "../../../../host/tests/support/loopback.rs"]
mod loopback;
#[path = "../package/mod.rs"]
mod package;
#[path = "../../../../host/tests/support/mod.rs"]
mod support;

mod pi_adapter;
mod pi_app;
mod pi_corpus;
mod pi_examples;
mod pi_exec;
mod pi_fetch;
mod pi_namespace_reads;
mod pi_node_fs;
mod pi_node_packages;
mod pi_packages;
mod pi_surface;
mod pi_wild_packages;
