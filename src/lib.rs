//! berth's Node-API binding (the root crate, napi-rs shape): converts JavaScript values to
//! core specs, calls one `berth_core` function per export, and converts results and errors
//! back. The core crate (`crates/berth-core`) has no napi dependency.

// Under `cfg(test)` napi-derive registers nothing, so the exports look unused there.
#![cfg_attr(test, allow(dead_code))]
// The core's errors are the cold path and carry their details by value for the JS `details` object.
#![allow(clippy::result_large_err)]

mod cancel;
mod engine_options;
mod errors;
mod files;
mod functions;
mod legacy;
mod listing;
mod metrics;
mod options;
mod peek_options;
mod process;
mod recovery;
mod session;
mod session_options;
mod templates;

#[napi_derive::module_init]
fn init() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("berth-worker")
        .enable_all()
        .build()
        .expect("berth: cannot start its tokio runtime");
    napi::bindgen_prelude::create_custom_tokio_runtime(rt);
    // The process-wide budget of buffered exec output, when the environment sets one.
    if let Some(bytes) = std::env::var("BERTH_BUFFER_BUDGET_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        berth_core::set_buffer_budget(bytes);
    }
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("berth: internal panic (a bug in berth; please report it with this message)");
        default_hook(info);
    }));
}
