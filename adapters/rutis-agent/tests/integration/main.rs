//! The rutis-agent adapter's integration tests, one module per concern, in
//! one test binary (one link and one process for all of them). The test
//! that counts a loaded library's live strings is a binary of its own, so
//! that no other test shares the library's counter.

#[path = "../../../../host/tests/support/mod.rs"]
mod support;

mod hot_plug;
mod tool_defs;
