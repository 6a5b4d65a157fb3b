//! Build script: make the embedded Python the one `python3` names.
//!
//! PyO3 links against the interpreter it finds at build time (`PYO3_PYTHON`,
//! else `python3` on `PATH`), but the dynamic loader would otherwise pick
//! whatever `libpython3.x.so` its cache knows first (on Debian, the system
//! one), whose `sys.path` cannot see packages installed with that
//! interpreter's `pip`. An rpath to the build interpreter's `LIBDIR` on the
//! host's binaries, tests and benches makes them load the same library.

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::add_libpython_rpath_link_args();
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
}
