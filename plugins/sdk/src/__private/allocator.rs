use std::cell::RefCell;
use std::marker::PhantomData;

use crate::twin::ArenaInstance;
use crate::{Allocator, Error, Packed, Pool};

wit_bindgen::generate!({
    path: "../../wit",
    world: "allocator-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_allocator_world",
    default_bindings_module: "::memlab_sdk::__private::allocator",
});

use exports::memlab::strategy::allocator as wit;
super::types_glue!(memlab::strategy::types);

/// The `Guest` implementation for an allocator type `T`.
pub struct Export<T>(PhantomData<T>);

impl<T: Allocator> wit::Guest for Export<T> {
    type Arena = ArenaResource<T>;
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

pub struct ArenaResource<T: Allocator> {
    arena: RefCell<ArenaInstance<T>>,
}

impl<T: Allocator> wit::GuestArena for ArenaResource<T> {
    fn create(params: Vec<(String, String)>) -> Result<wit::Arena, wit_types::Error> {
        install_panic_hook();
        Ok(wit::Arena::new(ArenaResource { arena: RefCell::new(ArenaInstance::<T>::create(params)?) }))
    }

    fn store(&self, rows: wit_types::Packed) -> Result<Vec<u64>, wit_types::Error> {
        let rows = packed_in(rows)?;
        self.arena.borrow_mut().store(&mut HostPool, &rows).map_err(Into::into)
    }

    fn load(&self, refs: Vec<u64>) -> Result<wit_types::Packed, wit_types::Error> {
        let mut out = Packed::new();
        self.arena.borrow().load(&refs, &mut out)?;
        Ok(packed_out(out))
    }

    fn describe(&self) -> wit_types::Description {
        description_out(self.arena.borrow().description())
    }

    fn stats(&self) -> Vec<(String, u64)> {
        self.arena.borrow().stats()
    }
}
