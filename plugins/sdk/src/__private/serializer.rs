use std::cell::RefCell;
use std::marker::PhantomData;

use crate::{Description, Error, FlushRecord, Packed, Params, SegmentReader, Serializer};

wit_bindgen::generate!({
    path: "../../wit",
    world: "serializer-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_serializer_world",
    default_bindings_module: "::memlab_sdk::__private::serializer",
});

use exports::memlab::strategy::serializer as wit;
super::types_glue!(memlab::strategy::types);

/// The `Guest` implementation for a serializer type `T`.
pub struct Export<T>(PhantomData<T>);

impl<T: Serializer> wit::Guest for Export<T> {
    type Writer = WriterResource<T>;
    type Reader = ReaderResource<T::Reader>;
}

pub struct WriterResource<T> {
    writer: RefCell<Option<T>>,
    description: Description,
}

impl<T: Serializer> WriterResource<T> {
    fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R, Error>) -> Result<R, wit_types::Error> {
        match self.writer.borrow_mut().as_mut() {
            Some(writer) => f(writer).map_err(Into::into),
            None => Err(Error::InvalidState("writer already finished".into()).into()),
        }
    }
}

impl<T: Serializer> wit::GuestWriter for WriterResource<T> {
    fn create(params: Vec<(String, String)>) -> Result<wit::Writer, wit_types::Error> {
        let (writer, description) = super::construct(T::NAME, T::VERSION, params, T::create)?;
        Ok(wit::Writer::new(WriterResource { writer: RefCell::new(Some(writer)), description }))
    }

    fn write(&self, records: wit_types::Packed) -> Result<Vec<u8>, wit_types::Error> {
        let records = packed_in(records)?;
        let mut out = Vec::with_capacity(records.data_len() + records.data_len() / 4);
        self.with(|writer| {
            for record in records.iter() {
                writer.write(FlushRecord::decode(record)?, &mut out)?;
            }
            Ok(())
        })?;
        Ok(out)
    }

    fn finish(&self) -> Result<wit::Finished, wit_types::Error> {
        let mut tail = Vec::new();
        let finished = self.with(|writer| writer.finish(&mut tail))?;
        *self.writer.borrow_mut() = None;
        let m = finished.meta;
        Ok(wit::Finished {
            tail,
            index: finished.index,
            meta: wit::SegmentMeta {
                rows: m.rows,
                partitions: m.partitions,
                tombstones: m.tombstones,
                min_timestamp: m.min_timestamp,
                max_timestamp: m.max_timestamp,
                min_clustering: m.min_clustering,
                max_clustering: m.max_clustering,
                checksum: m.checksum,
            },
        })
    }

    fn describe(&self) -> wit_types::Description {
        description_out(&self.description)
    }

    fn stats(&self) -> Vec<(String, u64)> {
        self.writer.borrow().as_ref().map(Serializer::stats).unwrap_or_default()
    }
}

pub struct ReaderResource<R> {
    reader: RefCell<R>,
}

impl<R: SegmentReader> wit::GuestReader for ReaderResource<R> {
    fn open(params: Vec<(String, String)>, data: Vec<u8>, index: Vec<u8>) -> Result<wit::Reader, wit_types::Error> {
        let mut params = Params::new(params);
        let reader = R::open(&mut params, data, index)?;
        params.finish()?;
        Ok(wit::Reader::new(ReaderResource { reader: RefCell::new(reader) }))
    }

    fn next(&self, max_bytes: u32) -> Result<wit_types::Packed, wit_types::Error> {
        let mut out = Packed::new();
        self.reader.borrow_mut().next(max_bytes as usize, &mut out)?;
        Ok(packed_out(out))
    }

    fn get(&self, keys: wit_types::Packed) -> Result<wit_types::Packed, wit_types::Error> {
        let keys = packed_in(keys)?;
        let reader = self.reader.borrow();
        let mut out = Packed::new();
        for key in keys.iter() {
            reader.get(key, &mut out)?;
        }
        Ok(packed_out(out))
    }
}
