//! The serializer's writer or reader's instance as the native table drives it: each operation
//! by its code, its answer in the thread's buffers.

use crate::contract::{Kind, Op};
use crate::native::entry::{limit, unknown};
use crate::native::{Answer, Hosted, Input, Made, encode_description, encode_finished, encode_stats};
use crate::twin::{ReaderInstance, WriterInstance};
use crate::{Error, Serializer};

/// A serializer's writer or one of its readers.
pub enum SerializerOf<S: Serializer> {
    /// A segment being written.
    Writer(WriterInstance<S>),
    /// A segment being read.
    Reader(ReaderInstance<S::Reader>),
}

impl<S: Serializer + Send> Made for SerializerOf<S>
where
    S::Reader: Send,
{
    const KIND: Kind = Kind::Serializer;
    const NAME: &'static str = S::NAME;
    const VERSION: &'static str = S::VERSION;

    fn create(op: Op, params: Vec<(String, String)>, a: &[u8], b: &[u8]) -> Result<Self, Error> {
        match op {
            Op::ReaderOpen => Ok(SerializerOf::Reader(ReaderInstance::open(params, a.to_vec(), b.to_vec())?)),
            _ => Ok(SerializerOf::Writer(WriterInstance::create(params)?)),
        }
    }
}

impl<S: Serializer + Send> Hosted for SerializerOf<S>
where
    S::Reader: Send,
{
    fn call(&mut self, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        match (self, op) {
            (SerializerOf::Writer(w), Op::WriterWrite) => w.write_each(input.records()?, &mut answer.bytes)?,
            (SerializerOf::Writer(w), Op::WriterFinish) => {
                let mut tail = Vec::new();
                let finished = w.finish(&mut tail)?;
                answer.put(encode_finished(&tail, &finished));
            }
            (SerializerOf::Writer(w), Op::WriterDescribe) => answer.put(encode_description(w.description())),
            (SerializerOf::Writer(w), Op::WriterStats) => answer.put(encode_stats(&w.stats())),
            (SerializerOf::Reader(r), Op::ReaderNext) => {
                r.next(limit(input.n), &mut answer.packed)?;
                answer.seal();
            }
            (SerializerOf::Reader(r), Op::ReaderGet) => {
                r.get(input.packed()?, &mut answer.packed)?;
                answer.seal();
            }
            (_, other) => return Err(unknown(other, "serializer writer's or reader's")),
        }
        Ok(())
    }
}
