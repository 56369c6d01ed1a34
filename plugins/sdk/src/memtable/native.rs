//! The memtable's instance as the native table drives it: each operation
//! by its code, its answer in the thread's buffers. One dispatch serves
//! both an instance one caller at a time calls (`MemtableOf`) and a
//! concurrent one every writer calls at once (`&SharedMemtable`), and
//! both run `MemtableInstance`'s loops, as the wasm export does.

use crate::contract::{Kind, Op};
use crate::native::entry::{limit, unknown};
use crate::native::{Answer, Hosted, Input, Made};
use crate::native::{encode_description, encode_stats};
use crate::twin::MemtableInstance;
use crate::{Error, Memtable, Packed};

/// A memtable instance as the native table calls it.
pub(crate) trait MemtableCalls {
    /// The strategy whose loops run.
    type Table: Memtable;
    /// The instance: its reads, description and counters.
    fn instance(&self) -> &MemtableInstance<Self::Table>;
    /// Inserts a batch (none once a cursor opened).
    fn insert(&mut self, entries: &Packed) -> Result<(), Error>;
    /// Freezes the memtable and opens its one cursor.
    fn open_cursor(&mut self);
    /// The cursor's next entries, up to `max_bytes`.
    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error>;
}

/// Runs `op` on `m`, its answer in `answer`.
pub(crate) fn dispatch(m: &mut impl MemtableCalls, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
    match op {
        Op::MemtableInsert => m.insert(input.packed()?)?,
        Op::MemtableGet => {
            m.instance().get(input.packed()?, &mut answer.packed);
            answer.seal();
        }
        Op::MemtableScan => {
            m.instance().scan(input.a, input.b, limit(input.n), &mut answer.packed);
            answer.seal();
        }
        Op::MemtableOpenCursor => m.open_cursor(),
        Op::CursorNext => {
            m.next(limit(input.n), &mut answer.packed)?;
            answer.seal();
        }
        Op::MemtableDescribe => answer.put(encode_description(m.instance().description())),
        Op::MemtableStats => answer.put(encode_stats(&m.instance().stats())),
        other => return Err(unknown(other, "memtable")),
    }
    Ok(())
}

pub(crate) fn no_cursor() -> Error {
    Error::InvalidState("no cursor is open".into())
}

/// A memtable and its open cursor.
pub struct MemtableOf<M: Memtable> {
    instance: MemtableInstance<M>,
    position: Option<M::Position>,
}

impl<M: Memtable + Send> Made for MemtableOf<M>
where
    M::Position: Send,
{
    const KIND: Kind = Kind::Memtable;
    const NAME: &'static str = M::NAME;
    const VERSION: &'static str = M::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        Ok(MemtableOf { instance: MemtableInstance::create(params)?, position: None })
    }
}

impl<M: Memtable> MemtableCalls for MemtableOf<M> {
    type Table = M;

    fn instance(&self) -> &MemtableInstance<M> {
        &self.instance
    }

    fn insert(&mut self, entries: &Packed) -> Result<(), Error> {
        self.instance.insert(entries)
    }

    fn open_cursor(&mut self) {
        self.position = Some(self.instance.cursor());
    }

    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        let position = self.position.as_mut().ok_or_else(no_cursor)?;
        self.instance.next(position, max_bytes, out);
        Ok(())
    }
}

impl<M: Memtable + Send> Hosted for MemtableOf<M>
where
    M::Position: Send,
{
    fn call(&mut self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        dispatch(self, op, input, answer)
    }
}
