//! The engine fields every options object of the binding carries (`socketPath`, `engine`,
//! `connectTimeoutMs`), declared once: `#[napi(object)]` cannot flatten a nested type into
//! the JS object, so [`with_engine_fields!`] adds the three fields to each options struct and
//! gives it `engine_options()`, the one conversion into the core's `EngineOptions`.

/// Declares a `#[napi(object)]` struct with the given fields followed by the engine fields,
/// and its `engine_options()` (see `options::engine_options` for the checks).
macro_rules! with_engine_fields {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[napi_derive::napi(object)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
            pub socket_path: Option<String>,
            /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
            pub engine: Option<
                napi::bindgen_prelude::Either<String, std::collections::HashMap<String, String>>,
            >,
            /// How long the engine's first answer may take, in milliseconds. @default 10000
            pub connect_timeout_ms: Option<f64>,
        }

        impl $name {
            /// The core engine options from this object's engine fields.
            #[allow(dead_code)]
            pub fn engine_options(&self) -> berth_core::Result<berth_core::EngineOptions> {
                $crate::options::engine_options(
                    self.socket_path.clone(),
                    self.engine.clone(),
                    self.connect_timeout_ms,
                )
            }
        }
    };
}
