//! Every operation the host calls on a plugin, named once: the SDK's
//! table (`memlab_sdk::Op`), whose names are the WIT's and whose codes are
//! the native table's. Errors, the watchdog, both runtimes and the run
//! record use them.

pub use memlab_sdk::Op;
