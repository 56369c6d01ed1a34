use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

use super::twin::MemtableInstance;
use crate::{Memtable, Packed};

wit_bindgen::generate!({
    path: "../../wit",
    world: "memtable-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_memtable_world",
    default_bindings_module: "::memlab_sdk::__export::memtable",
});

use crate::__private::packed_out;
use exports::memlab::strategy::memtable as wit;
crate::__private::types_glue!(memlab::strategy::types);
crate::__private::output_glue!(packed);

/// The `Guest` implementation for a memtable type `T`.
pub struct Export<T>(PhantomData<T>);

/// The instance's one memtable (memtable contract 0), shared with its
/// cursors. `Any` because a static cannot name `T`; a plugin exports one
/// memtable type, so the downcast always finds it.
type Shared<T> = Rc<RefCell<MemtableInstance<T>>>;

thread_local! {
    static TABLE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

fn with_table<T: Memtable + 'static, R>(f: impl FnOnce(&Shared<T>) -> R) -> R {
    TABLE.with_borrow(|table| {
        // Contract 0: the host calls `create` first; anything else is a host bug.
        let table = table.as_ref().and_then(|t| t.downcast_ref::<Shared<T>>()).expect("memtable contract 0: `create` comes first");
        f(table)
    })
}

impl<T: Memtable + 'static> wit::Guest for Export<T> {
    type Cursor = CursorResource<T>;

    fn create(params: Vec<(String, String)>) -> Result<(), wit_types::Error> {
        install_panic_hook();
        if TABLE.with_borrow(Option::is_some) {
            return Err(wit_types::Error::InvalidState("memtable contract 0: this instance's memtable exists already".into()));
        }
        let instance: Shared<T> = Rc::new(RefCell::new(MemtableInstance::<T>::create(params)?));
        TABLE.set(Some(Box::new(instance)));
        Ok(())
    }

    fn insert(entries: wit_types::Packed) -> Result<(), wit_types::Error> {
        let entries = packed_in(entries)?;
        with_table::<T, _>(|t| t.borrow_mut().insert(&entries).map_err(Into::into))
    }

    fn get(keys: wit_types::Packed) -> wit_types::Packed {
        let mut out = Packed::new();
        // Malformed key batches read as no keys: `get` has no error
        // channel, and the host refuses the record count that follows.
        let keys = packed_in(keys).unwrap_or_default();
        with_table::<T, _>(|t| t.borrow().get(&keys, &mut out));
        packed_out(out)
    }

    fn scan(start: Vec<u8>, end: Option<Vec<u8>>, limit: u32) -> wit_types::Packed {
        let mut out = Packed::new();
        with_table::<T, _>(|t| t.borrow().scan(&start, end.as_deref(), limit, &mut out));
        packed_out(out)
    }

    fn open_cursor() -> wit::Cursor {
        with_table::<T, _>(|t| {
            let position = RefCell::new(t.borrow_mut().cursor());
            wit::Cursor::new(CursorResource { instance: Rc::clone(t), position })
        })
    }

    fn describe() -> wit_types::Description {
        with_table::<T, _>(|t| description_out(t.borrow().description()))
    }

    fn stats() -> Vec<(String, u64)> {
        with_table::<T, _>(|t| t.borrow().stats())
    }
}

pub struct CursorResource<T: Memtable> {
    instance: Shared<T>,
    position: RefCell<T::Position>,
}

impl<T: Memtable + 'static> wit::GuestCursor for CursorResource<T> {
    fn next(&self, max_bytes: u32) {
        let answered: Result<(), std::convert::Infallible> = answer_packed(|out| {
            self.instance.borrow().next(&mut self.position.borrow_mut(), max_bytes, out);
            Ok(())
        });
        let Ok(()) = answered;
    }
}
