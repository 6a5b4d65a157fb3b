//! Logging from a plugin. Each line carries the `run_id` of the hook call it
//! is written in; the host attaches it. In a dylib the line goes through the
//! call's `HostApi`; in a Wasm component, through the `host.log` import.

use std::cell::Cell;
use yohost_contract::abi::{HostApi, LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARN};

thread_local! {
    static CURRENT: Cell<*const HostApi> = const { Cell::new(std::ptr::null()) };
}

/// The host of the call in progress on this thread, while it lasts.
pub(crate) struct CurrentHost(*const HostApi);

impl CurrentHost {
    pub(crate) fn enter(host: *const HostApi) -> Self {
        Self(CURRENT.with(|c| c.replace(host)))
    }
}

impl Drop for CurrentHost {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

fn write(level: u32, message: &str) {
    #[cfg(all(feature = "wasm", target_family = "wasm"))]
    return crate::wasm::log(level, message);
    #[cfg(not(all(feature = "wasm", target_family = "wasm")))]
    CURRENT.with(|c| {
        let host = c.get();
        if !host.is_null() {
            // SAFETY: set only for the duration of a host call, during which
            // the host keeps its `HostApi` alive.
            let host = unsafe { &*host };
            (host.log)(host.ctx, level, message.as_ptr(), message.len());
        }
    });
}

/// Log an error line. Outside a hook call it goes nowhere.
pub fn error(message: &str) {
    write(LOG_ERROR, message)
}

/// Log a warning line.
pub fn warn(message: &str) {
    write(LOG_WARN, message)
}

/// Log an info line.
pub fn info(message: &str) {
    write(LOG_INFO, message)
}

/// Log a debug line.
pub fn debug(message: &str) {
    write(LOG_DEBUG, message)
}
