//! Export glue between the WIT bindings and the SDK traits. Hidden: plugin
//! authors see only the traits and `export!`.

pub use wit_bindgen::rt;

use crate::{Error, Packed};

pub fn packed_in(wire: Vec<u8>) -> Result<Packed, Error> {
    Packed::from_wire(wire)
}

/// A batch as a returned `packed` (every world's `packed` is a `list<u8>`).
pub fn packed_out(p: Packed) -> Vec<u8> {
    p.into_wire()
}

/// Converts between the SDK's types and one world's generated types; each
/// world has its own copy of `types`, so this is a macro.
macro_rules! types_glue {
    ($types:path) => {
        use $types as wit_types;

        impl From<$crate::Error> for wit_types::Error {
            fn from(e: $crate::Error) -> Self {
                match e {
                    $crate::Error::BadParam(m) => wit_types::Error::BadParam(m),
                    $crate::Error::PoolFull => wit_types::Error::PoolFull,
                    $crate::Error::Corrupt(m) => wit_types::Error::Corrupt(m),
                    $crate::Error::InvalidState(m) => wit_types::Error::InvalidState(m),
                    $crate::Error::Other(m) => wit_types::Error::Other(m),
                }
            }
        }

        fn packed_in(p: wit_types::Packed) -> Result<$crate::Packed, wit_types::Error> {
            $crate::__private::packed_in(p).map_err(Into::into)
        }

        /// Hands a panic's message and location to the host before the
        /// trap (diagnostics contract 1); installed once, by `create`.
        fn install_panic_hook() {
            static HOOK: std::sync::Once = std::sync::Once::new();
            HOOK.call_once(|| std::panic::set_hook(Box::new(|info| memlab::strategy::diagnostics::panicked(&info.to_string()))));
        }

        fn description_out(d: &$crate::Description) -> wit_types::Description {
            wit_types::Description { name: d.name.clone(), version: d.version.clone(), params: d.params.clone() }
        }
    };
}
pub(crate) use types_glue;

/// The `output` import (output contract 1), for the worlds that answer
/// through it: `answer_packed` or `answer_bytes` fills a buffer the
/// instance keeps, so an answer allocates nothing once it has grown, and
/// hands it to the host, which reads it in place. A macro, as
/// `types_glue!`, since each world generates its own import.
#[cfg(any(feature = "memtable", feature = "allocator", feature = "serializer"))]
macro_rules! output_glue {
    (packed) => {
        thread_local! {
            static ANSWER: std::cell::RefCell<$crate::Packed> = std::cell::RefCell::new($crate::Packed::new());
        }

        fn answer_packed<E>(fill: impl FnOnce(&mut $crate::Packed) -> Result<(), E>) -> Result<(), E> {
            ANSWER.with_borrow_mut(|out| {
                out.clear();
                fill(out)?;
                memlab::strategy::output::put(out.seal());
                Ok(())
            })
        }
    };
    (bytes) => {
        thread_local! {
            static ANSWER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }

        fn answer_bytes<E>(fill: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<(), E> {
            ANSWER.with_borrow_mut(|out| {
                out.clear();
                fill(out)?;
                memlab::strategy::output::put(out);
                Ok(())
            })
        }
    };
}
#[cfg(any(feature = "memtable", feature = "allocator", feature = "serializer"))]
pub(crate) use output_glue;
