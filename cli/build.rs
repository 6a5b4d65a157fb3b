//! Build script: the embedded Python is the one yohost was built against
//! (`python3`, or `PYO3_PYTHON`), not whichever `libpython` the loader finds
//! first.
//!
//! The line in `main` is the one any program that embeds yohost (with its
//! `python` feature) needs in its own `build.rs`: yohost's build script
//! hands over the interpreter's `LIBDIR`, and this puts it in the rpath of
//! the program's binaries.

fn main() {
    if let Ok(dir) = std::env::var("DEP_YOHOST_PYTHON_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
