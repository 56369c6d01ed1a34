//! The one integration test binary (as wasmtime does): plugins, the
//! reference model, the pipeline end to end, and bad input.

mod allocators;
mod bad_input;
mod c_plugin;
mod caches_and_links;
mod check;
mod commitlog;
mod concurrent;
mod config;
mod differential;
mod fuzz;
mod golden;
mod hostile;
mod kinds;
mod layout;
mod native_table;
mod pipeline;
mod plugins;
mod profiles;
mod promises;
mod properties;
mod records;
mod report;
mod rounds;
mod scaffold;
mod seeds;
mod segments;
mod serializers;
mod session;
mod streams;
mod support;
mod trust;
mod untrusted;
