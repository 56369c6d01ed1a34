use std::cell::RefCell;
use std::marker::PhantomData;

use super::twin::{ReaderInstance, WriterInstance};
use crate::{Packed, SegmentReader, Serializer};

wit_bindgen::generate!({
    path: "../../wit",
    world: "serializer-plugin",
    runtime_path: "::memlab_sdk::__private::rt",
    pub_export_macro: true,
    export_macro_name: "__memlab_export_serializer_world",
    default_bindings_module: "::memlab_sdk::__export::serializer",
});

use crate::__private::packed_out;
use exports::memlab::strategy::serializer as wit;
crate::__private::types_glue!(memlab::strategy::types);
crate::__private::output_glue!(bytes);

/// The `Guest` implementation for a serializer type `T`.
pub struct Export<T>(PhantomData<T>);

impl<T: Serializer> wit::Guest for Export<T> {
    type Writer = WriterResource<T>;
    type Reader = ReaderResource<T::Reader>;
}

pub struct WriterResource<T: Serializer> {
    writer: RefCell<WriterInstance<T>>,
}

impl<T: Serializer> wit::GuestWriter for WriterResource<T> {
    fn create(params: Vec<(String, String)>) -> Result<wit::Writer, wit_types::Error> {
        install_panic_hook();
        Ok(wit::Writer::new(WriterResource { writer: RefCell::new(WriterInstance::<T>::create(params)?) }))
    }

    fn write(&self, records: wit_types::Packed) -> Result<(), wit_types::Error> {
        let records = packed_in(records)?;
        answer_bytes(|out| self.writer.borrow_mut().write(&records, out))?;
        Ok(())
    }

    fn finish(&self) -> Result<wit::Finished, wit_types::Error> {
        let mut tail = Vec::new();
        let finished = self.writer.borrow_mut().finish(&mut tail)?;
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
        description_out(self.writer.borrow().description())
    }

    fn stats(&self) -> Vec<(String, u64)> {
        self.writer.borrow().stats()
    }
}

pub struct ReaderResource<R: SegmentReader> {
    reader: RefCell<ReaderInstance<R>>,
}

impl<R: SegmentReader> wit::GuestReader for ReaderResource<R> {
    fn open(params: Vec<(String, String)>, data: Vec<u8>, index: Vec<u8>) -> Result<wit::Reader, wit_types::Error> {
        install_panic_hook();
        Ok(wit::Reader::new(ReaderResource { reader: RefCell::new(ReaderInstance::<R>::open(params, data, index)?) }))
    }

    fn next(&self, max_bytes: u32) -> Result<wit_types::Packed, wit_types::Error> {
        let mut out = Packed::new();
        self.reader.borrow_mut().next(max_bytes, &mut out)?;
        Ok(packed_out(out))
    }

    fn get(&self, keys: wit_types::Packed) -> Result<wit_types::Packed, wit_types::Error> {
        let keys = packed_in(keys)?;
        let mut out = Packed::new();
        self.reader.borrow().get(&keys, &mut out)?;
        Ok(packed_out(out))
    }
}
