//! The C ABI of a rutis-agent tool library: its symbols, and the strings
//! it hands out.
//!
//! Every string the library returns is read up to its NUL but never past a
//! limit (a missing NUL cannot make the host walk memory without end) and
//! copied. As rutis's own loader and demo host do, only the results of
//! `rutis_plugin_tool_invoke` are handed back to `rutis_plugin_free` (when
//! the library exports it): a library may return its name and schemas as
//! static strings, which must never be freed.

use std::ffi::{c_char, CString};
use std::path::Path;

type CountFn = unsafe extern "C" fn() -> u32;
type SchemaFn = unsafe extern "C" fn(u32) -> *const c_char;
type InvokeFn = unsafe extern "C" fn(u32, *const c_char) -> *const c_char;
type NameFn = unsafe extern "C" fn() -> *const c_char;
type FreeFn = unsafe extern "C" fn(*mut c_char);

/// The symbols a tool library must export.
pub const REQUIRED: [&str; 3] = [
    "rutis_plugin_tool_count",
    "rutis_plugin_tool_schema",
    "rutis_plugin_tool_invoke",
];

/// Why a library could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file could not be read or copied (already a refusal with its
    /// path and reason).
    #[error("{0}")]
    Copy(yohost::LoadError),
    /// The dynamic loader refused it.
    #[error("cannot load the library: {0}")]
    Load(libloading::Error),
    /// A required symbol is missing.
    #[error("the library exports no `{0}`, which every rutis-agent tool library has")]
    Missing(&'static str),
}

/// A string the library returned.
#[derive(Debug, PartialEq, Eq)]
pub enum Returned {
    /// A null pointer.
    Null,
    /// No NUL within the limit: the string is longer than allowed.
    TooLong,
    /// The bytes before the NUL.
    Bytes(Vec<u8>),
}

/// An opened tool library. The function pointers stay valid as long as it
/// lives, because it owns the loaded library.
pub struct ToolLibrary {
    count: CountFn,
    schema: SchemaFn,
    invoke: InvokeFn,
    name: Option<NameFn>,
    free: Option<FreeFn>,
    _library: libloading::Library,
}

impl ToolLibrary {
    /// Open a private copy of the library at `path` (see
    /// [`yohost::adapter::dylib::private_copy`]) and find its symbols.
    pub fn open(path: &Path) -> Result<Self, OpenError> {
        let private = yohost::adapter::dylib::private_copy(path).map_err(OpenError::Copy)?;
        // SAFETY: loading a library runs its initializers; tool libraries are
        // trusted code by design, like yohost's own dylibs.
        let library = unsafe { libloading::Library::new(&private) }.map_err(OpenError::Load)?;
        // SAFETY (all `get`s): the types are those of the rutis-agent tool
        // ABI; the pointers are copied out and used only while `library`
        // lives, because `ToolLibrary` owns it.
        unsafe {
            let count = *library
                .get::<CountFn>(REQUIRED[0].as_bytes())
                .map_err(|_| OpenError::Missing(REQUIRED[0]))?;
            let schema = *library
                .get::<SchemaFn>(REQUIRED[1].as_bytes())
                .map_err(|_| OpenError::Missing(REQUIRED[1]))?;
            let invoke = *library
                .get::<InvokeFn>(REQUIRED[2].as_bytes())
                .map_err(|_| OpenError::Missing(REQUIRED[2]))?;
            let name = library.get::<NameFn>(b"rutis_plugin_name").ok().map(|s| *s);
            let free = library.get::<FreeFn>(b"rutis_plugin_free").ok().map(|s| *s);
            Ok(Self {
                count,
                schema,
                invoke,
                name,
                free,
                _library: library,
            })
        }
    }

    /// `rutis_plugin_tool_count()`.
    pub fn count(&self) -> u32 {
        // SAFETY: the ABI's signature; no arguments.
        unsafe { (self.count)() }
    }

    /// `rutis_plugin_tool_schema(i)`, read up to `limit` bytes; the string
    /// stays the library's.
    pub fn schema(&self, i: u32, limit: usize) -> Returned {
        // SAFETY: the ABI's signature; the returned string is read below.
        copy(unsafe { (self.schema)(i) }, limit)
    }

    /// `rutis_plugin_name()`, if the library exports it, read up to `limit`
    /// bytes; the string stays the library's.
    pub fn name(&self, limit: usize) -> Option<Returned> {
        // SAFETY: the ABI's signature; the returned string is read below.
        self.name.map(|name| copy(unsafe { name() }, limit))
    }

    /// `rutis_plugin_tool_invoke(i, args)`, read up to `limit` bytes, then
    /// given back to the library's `free`, if it has one.
    pub fn invoke(&self, i: u32, args: &CString, limit: usize) -> Returned {
        // SAFETY: `args` is a valid NUL-terminated string for the call.
        let result = unsafe { (self.invoke)(i, args.as_ptr()) };
        let returned = copy(result, limit);
        if let (Some(free), false) = (self.free, result.is_null()) {
            // SAFETY: an invoke result came from this library, which frees
            // it as rutis's hosts have it do, once.
            unsafe { free(result.cast_mut()) };
        }
        returned
    }
}

/// Copy a returned string: at most `limit` bytes before its NUL.
fn copy(ptr: *const c_char, limit: usize) -> Returned {
    if ptr.is_null() {
        return Returned::Null;
    }
    // SAFETY: the library returned a NUL-terminated string; bytes are read
    // one by one up to its NUL and never past `limit`, so a string longer
    // than allowed is not read to its end.
    match unsafe { read_bounded(ptr.cast::<u8>(), limit) } {
        Some(bytes) => Returned::Bytes(bytes),
        None => Returned::TooLong,
    }
}

/// The bytes before the first NUL at `ptr`, or `None` if there is no NUL
/// within `limit` bytes.
///
/// # Safety
/// `ptr` must be readable up to its first NUL or `limit + 1` bytes,
/// whichever comes first.
unsafe fn read_bounded(ptr: *const u8, limit: usize) -> Option<Vec<u8>> {
    let mut len = 0;
    while len <= limit {
        if *ptr.add(len) == 0 {
            return Some(std::slice::from_raw_parts(ptr, len).to_vec());
        }
        len += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_nul_or_the_limit() {
        let text = b"abc\0def";
        // SAFETY: the buffer is readable for its whole length.
        unsafe {
            assert_eq!(read_bounded(text.as_ptr(), 10), Some(b"abc".to_vec()));
            assert_eq!(read_bounded(text.as_ptr(), 3), Some(b"abc".to_vec()));
            assert_eq!(read_bounded(text.as_ptr(), 2), None);
        }
    }
}
