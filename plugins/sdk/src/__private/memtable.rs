use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

use crate::twin::MemtableInstance;
use crate::{Memtable, Packed};

wit_bindgen::generate!({
    path: "../../wit",
    world: "memtable-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_memtable_world",
    default_bindings_module: "::memlab_sdk::__private::memtable",
});

use exports::memlab::strategy::memtable as wit;
super::types_glue!(memlab::strategy::types);

/// The `Guest` implementation for a memtable type `T`.
pub struct Export<T>(PhantomData<T>);

impl<T: Memtable> wit::Guest for Export<T> {
    type Memtable = MemtableResource<T>;
    type Cursor = CursorResource<T>;
}

pub struct MemtableResource<T: Memtable> {
    instance: Rc<RefCell<MemtableInstance<T>>>,
}

pub struct CursorResource<T: Memtable> {
    instance: Rc<RefCell<MemtableInstance<T>>>,
    position: RefCell<T::Position>,
}

impl<T: Memtable> wit::GuestMemtable for MemtableResource<T> {
    fn create(params: Vec<(String, String)>) -> Result<wit::Memtable, wit_types::Error> {
        install_panic_hook();
        let instance = MemtableInstance::<T>::create(params)?;
        Ok(wit::Memtable::new(MemtableResource { instance: Rc::new(RefCell::new(instance)) }))
    }

    fn insert(&self, entries: wit_types::Packed) -> Result<(), wit_types::Error> {
        let entries = packed_in(entries)?;
        self.instance.borrow_mut().insert(&entries).map_err(Into::into)
    }

    fn get(&self, keys: wit_types::Packed) -> wit_types::Packed {
        let mut out = Packed::new();
        // Malformed key batches read as no keys: `get` has no error
        // channel, and the host refuses the record count that follows.
        let keys = packed_in(keys).unwrap_or_default();
        self.instance.borrow().get(&keys, &mut out);
        packed_out(out)
    }

    fn scan(&self, start: Vec<u8>, end: Option<Vec<u8>>, limit: u32) -> wit_types::Packed {
        let mut out = Packed::new();
        self.instance.borrow().scan(&start, end.as_deref(), limit, &mut out);
        packed_out(out)
    }

    fn cursor(&self) -> wit::Cursor {
        let position = RefCell::new(self.instance.borrow_mut().cursor());
        wit::Cursor::new(CursorResource { instance: Rc::clone(&self.instance), position })
    }

    fn describe(&self) -> wit_types::Description {
        description_out(self.instance.borrow().description())
    }

    fn stats(&self) -> Vec<(String, u64)> {
        self.instance.borrow().stats()
    }
}

impl<T: Memtable> wit::GuestCursor for CursorResource<T> {
    fn next(&self, max_bytes: u32) -> wit_types::Packed {
        let mut out = Packed::new();
        self.instance.borrow().next(&mut self.position.borrow_mut(), max_bytes, &mut out);
        packed_out(out)
    }
}
