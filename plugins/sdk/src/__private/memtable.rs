use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

use crate::{Description, Error, Memtable, Packed};

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

struct State<T> {
    table: T,
    frozen: bool,
    description: Description,
}

pub struct MemtableResource<T: Memtable> {
    state: Rc<RefCell<State<T>>>,
}

pub struct CursorResource<T: Memtable> {
    state: Rc<RefCell<State<T>>>,
    position: RefCell<T::Position>,
}

impl<T: Memtable> wit::GuestMemtable for MemtableResource<T> {
    fn create(params: Vec<(String, String)>) -> Result<wit::Memtable, wit_types::Error> {
        let (table, description) = super::construct(T::NAME, T::VERSION, params, T::create)?;
        let state = State { table, frozen: false, description };
        Ok(wit::Memtable::new(MemtableResource { state: Rc::new(RefCell::new(state)) }))
    }

    fn insert(&self, entries: wit_types::Packed) -> Result<(), wit_types::Error> {
        let entries = packed_in(entries)?;
        let mut state = self.state.borrow_mut();
        if state.frozen {
            return Err(Error::InvalidState("insert after a cursor was opened".into()).into());
        }
        state.table.insert_batch(&entries).map_err(Into::into)
    }

    fn get(&self, keys: wit_types::Packed) -> wit_types::Packed {
        let state = self.state.borrow();
        let mut out = Packed::new();
        // Malformed key batches read as no keys: `get` has no error channel.
        let keys = packed_in(keys).unwrap_or_default();
        for key in keys.iter() {
            match state.table.get(key) {
                Some(entry) => out.push_with(|buf| entry.encode(buf)),
                None => out.push(&[]),
            }
        }
        packed_out(out)
    }

    fn scan(&self, start: Vec<u8>, end: Option<Vec<u8>>, limit: u32) -> wit_types::Packed {
        let mut out = Packed::new();
        self.state.borrow().table.scan(&start, end.as_deref(), limit as usize, &mut out);
        packed_out(out)
    }

    fn cursor(&self) -> wit::Cursor {
        let mut state = self.state.borrow_mut();
        if !state.frozen {
            state.frozen = true;
            state.table.freeze();
        }
        let position = RefCell::new(state.table.cursor());
        drop(state);
        wit::Cursor::new(CursorResource { state: Rc::clone(&self.state), position })
    }

    fn describe(&self) -> wit_types::Description {
        description_out(&self.state.borrow().description)
    }

    fn stats(&self) -> Vec<(String, u64)> {
        self.state.borrow().table.stats()
    }
}

impl<T: Memtable> wit::GuestCursor for CursorResource<T> {
    fn next(&self, max_bytes: u32) -> wit_types::Packed {
        let mut out = Packed::new();
        let state = self.state.borrow();
        state.table.next(&mut self.position.borrow_mut(), max_bytes as usize, &mut out);
        packed_out(out)
    }
}
