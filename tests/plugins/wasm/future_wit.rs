//! A component built against `yohost:plugin@0.2.0`, a version this host
//! does not speak: it must be refused at load, naming both versions.

wit_bindgen::generate!({ path: "wit-future", world: "plugin" });

struct Future;

impl exports::yohost::plugin::guest::Guest for Future {
    fn name() -> String {
        "future".into()
    }
}

export!(Future);
