//! The memtable's instance as the native table drives it: each operation
//! by its code, its answer in the thread's buffers.

use crate::contract::{Kind, Op};
use crate::native::entry::{limit, unknown};
use crate::native::{Answer, Hosted, Input, Made};
use crate::native::{encode_description, encode_stats};
use crate::twin::MemtableInstance;
use crate::{Error, Memtable};

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

impl<M: Memtable + Send> Hosted for MemtableOf<M>
where
    M::Position: Send,
{
    fn call(&mut self, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        match op {
            Op::MemtableInsert => self.instance.insert(input.packed()?)?,
            Op::MemtableGet => {
                self.instance.get(input.packed()?, &mut answer.packed);
                answer.seal();
            }
            Op::MemtableScan => {
                self.instance.scan(input.a, input.b, limit(input.n), &mut answer.packed);
                answer.seal();
            }
            Op::MemtableOpenCursor => self.position = Some(self.instance.cursor()),
            Op::CursorNext => {
                let position = self.position.as_mut().ok_or_else(|| Error::InvalidState("no cursor is open".into()))?;
                self.instance.next(position, limit(input.n), &mut answer.packed);
                answer.seal();
            }
            Op::MemtableDescribe => answer.put(encode_description(self.instance.description())),
            Op::MemtableStats => answer.put(encode_stats(&self.instance.stats())),
            other => return Err(unknown(other, "memtable")),
        }
        Ok(())
    }
}
