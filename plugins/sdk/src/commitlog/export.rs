use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;

use super::twin::CommitLogInstance;
use crate::{CommitLog, Tail};

wit_bindgen::generate!({
    path: "../../wit",
    world: "commitlog-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_commitlog_world",
    default_bindings_module: "::memlab_sdk::__export::commitlog",
});

use crate::__private::packed_out;
use exports::memlab::strategy::commitlog as wit;
crate::__private::types_glue!(memlab::strategy::types);

/// The `Guest` implementation for a commit-log type `T`.
pub struct Export<T>(PhantomData<T>);

thread_local! {
    // `Any` because a static cannot name `T`; a plugin exports one type.
    static LOG: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

fn with_log<T: CommitLog, R>(f: impl FnOnce(&mut CommitLogInstance<T>) -> R) -> R {
    LOG.with_borrow_mut(|log| {
        // Contract 0: the host calls `create` first; anything else is a host bug.
        let log = log.as_mut().and_then(|l| l.downcast_mut::<CommitLogInstance<T>>()).expect("commitlog contract 0: `create` comes first");
        f(log)
    })
}

impl<T: CommitLog> wit::Guest for Export<T> {
    fn create(params: Vec<(String, String)>) -> Result<(), wit_types::Error> {
        install_panic_hook();
        if LOG.with_borrow(Option::is_some) {
            return Err(wit_types::Error::InvalidState("commitlog contract 0: this instance's log exists already".into()));
        }
        let instance = CommitLogInstance::<T>::create(params)?;
        LOG.set(Some(Box::new(instance)));
        Ok(())
    }

    fn encode(rows: wit_types::Packed) -> Result<Vec<u8>, wit_types::Error> {
        let rows = packed_in(rows)?;
        let mut out = Vec::with_capacity(rows.data_len() + rows.len() * 8 + 16);
        with_log::<T, _>(|l| l.encode(&rows, &mut out))?;
        Ok(out)
    }

    fn replay(segment: Vec<u8>, max_rows: u32) -> Result<wit::Replayed, wit_types::Error> {
        let replayed = with_log::<T, _>(|l| l.replay(&segment, max_rows));
        let tail = match replayed.tail {
            Tail::Clean => wit::Tail::Clean,
            Tail::Torn => wit::Tail::Torn,
            Tail::Damaged => wit::Tail::Damaged,
        };
        Ok(wit::Replayed { rows: packed_out(replayed.rows), intact: replayed.intact, tail })
    }

    fn describe() -> wit_types::Description {
        with_log::<T, _>(|l| description_out(l.description()))
    }

    fn stats() -> Vec<(String, u64)> {
        with_log::<T, _>(|l| l.stats())
    }
}
