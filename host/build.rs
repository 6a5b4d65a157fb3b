//! Build script: make the embedded Python the one `python3` names.
//!
//! PyO3 links against the interpreter it finds at build time (`PYO3_PYTHON`,
//! else `python3` on `PATH`), but the dynamic loader would otherwise pick
//! whatever `libpython3.x.so` its cache knows first (on Debian, the system
//! one), whose `sys.path` cannot see packages installed with that
//! interpreter's `pip`. An rpath to the build interpreter's `LIBDIR` on the
//! host's binaries, tests and benches makes them load the same library.
//!
//! A program that embeds yohost needs the same rpath on its own binary: this
//! script hands the folder to the build scripts of the packages that depend
//! on yohost as `DEP_YOHOST_PYTHON_LIB_DIR` (`links = "yohost"`), and one
//! line of theirs adds it (see `cli/build.rs`).

fn main() {
    #[cfg(feature = "python")]
    {
        pyo3_build_config::add_libpython_rpath_link_args();
        let unix = std::env::var("CARGO_CFG_TARGET_FAMILY").is_ok_and(|f| f == "unix");
        if let Some(dir) = pyo3_build_config::get().lib_dir().filter(|_| unix) {
            println!("cargo:python_lib_dir={dir}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
}
