use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;

use super::twin::AllocatorInstance;
use crate::{Allocator, Error, Pool};

wit_bindgen::generate!({
    path: "../../wit",
    world: "allocator-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_allocator_world",
    default_bindings_module: "::memlab_sdk::__export::allocator",
});

use exports::memlab::strategy::allocator as wit;
crate::__private::types_glue!(memlab::strategy::types);
crate::__private::output_glue!(packed);

/// The `Guest` implementation for an allocator type `T`.
pub struct Export<T>(PhantomData<T>);

thread_local! {
    /// The instance's one arena (allocator contract 0). `Any` because a
    /// static cannot name `T`; a plugin exports one allocator type.
    static ARENA: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

fn with_arena<T: Allocator + 'static, R>(f: impl FnOnce(&RefCell<AllocatorInstance<T>>) -> R) -> R {
    ARENA.with_borrow(|arena| {
        // Contract 0: the host calls `create` first; anything else is a host bug.
        let arena = arena.as_ref().and_then(|a| a.downcast_ref::<RefCell<AllocatorInstance<T>>>()).expect("allocator contract 0: `create` comes first");
        f(arena)
    })
}

/// The host's pool, reached through the `pool` import.
struct HostPool;

fn pool_error(e: wit_types::Error) -> Error {
    match e {
        wit_types::Error::PoolFull => Error::PoolFull,
        other => Error::Other(format!("pool: {other:?}")),
    }
}

impl Pool for HostPool {
    fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
        memlab::strategy::pool::reserve(bytes).map_err(pool_error)
    }

    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
        memlab::strategy::pool::reserve_each(sizes).map_err(pool_error)
    }

    fn release(&mut self, bytes: u64) {
        memlab::strategy::pool::release(bytes);
    }
}

impl<T: Allocator + 'static> wit::Guest for Export<T> {
    fn create(params: Vec<(String, String)>) -> Result<(), wit_types::Error> {
        install_panic_hook();
        if ARENA.with_borrow(Option::is_some) {
            return Err(wit_types::Error::InvalidState("allocator contract 0: this instance's arena exists already".into()));
        }
        let arena = RefCell::new(AllocatorInstance::<T>::create(params)?);
        ARENA.set(Some(Box::new(arena)));
        Ok(())
    }

    fn store_rows(rows: wit_types::Packed) -> Result<Vec<u64>, wit_types::Error> {
        let rows = packed_in(rows)?;
        with_arena::<T, _>(|a| a.borrow_mut().store(&mut HostPool, &rows).map_err(Into::into))
    }

    fn load(refs: Vec<u64>) -> Result<(), wit_types::Error> {
        answer_packed(|out| with_arena::<T, _>(|a| a.borrow().load(&refs, out)))?;
        Ok(())
    }

    fn describe() -> wit_types::Description {
        with_arena::<T, _>(|a| description_out(a.borrow().description()))
    }

    fn stats() -> Vec<(String, u64)> {
        with_arena::<T, _>(|a| a.borrow().stats())
    }
}
