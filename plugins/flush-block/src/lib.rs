//! `block`: a flush serializer writing blocks with key prefix compression,
//! restart points and a CRC32 per block, in the manner of LevelDB / RocksDB
//! block-based tables. Each key stores only the bytes it does not share
//! with the previous key; every `restart_interval` entries a key is stored
//! whole, so a reader can binary-search a block. A block closes once it
//! holds `block_size` bytes. Metadata is tracked the lean way.

mod format;
mod reader;

use format::{FOOTER, MAGIC, put_varint};
use memlab_sdk::{Error, Finished, FlushRecord, Params, Serializer, Stats};
use rowfile::SortedMeta;

pub use reader::BlockReader;

/// Writes one block segment.
#[derive(Debug)]
pub struct BlockWriter {
    block_size: usize,
    restart_interval: usize,
    block: Vec<u8>,
    restarts: Vec<u32>,
    since_restart: usize,
    last_key: Vec<u8>,
    first_key: Vec<u8>,
    offset: u64,
    index: Vec<u8>,
    blocks: u32,
    checksum: crc32fast::Hasher,
    meta: SortedMeta,
    key_bytes_saved: u64,
    restarts_total: u64,
}

impl BlockWriter {
    /// Closes the current block into `out` and indexes it.
    fn close_block(&mut self, out: &mut Vec<u8>) {
        if self.block.is_empty() {
            return;
        }
        for restart in &self.restarts {
            self.block.extend_from_slice(&restart.to_le_bytes());
        }
        self.block.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        let crc = crc32fast::hash(&self.block);
        self.block.extend_from_slice(&crc.to_le_bytes());
        self.checksum.update(&self.block);
        out.extend_from_slice(&self.block);

        self.index.extend_from_slice(&(self.first_key.len() as u32).to_le_bytes());
        self.index.extend_from_slice(&self.first_key);
        self.index.extend_from_slice(&self.offset.to_le_bytes());
        self.index.extend_from_slice(&(self.block.len() as u32).to_le_bytes());
        self.offset += self.block.len() as u64;
        self.blocks += 1;
        self.block.clear();
        self.restarts.clear();
        self.last_key.clear();
    }
}

impl Serializer for BlockWriter {
    const NAME: &'static str = "block";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Reader = BlockReader;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let block_size: usize = params.get("block_size", 4096)?;
        let restart_interval: usize = params.get("restart_interval", 16)?;
        if !(256..=1 << 24).contains(&block_size) {
            return Err(Error::BadParam(format!("block_size {block_size} is outside 256..=16777216")));
        }
        if !(1..=1024).contains(&restart_interval) {
            return Err(Error::BadParam(format!("restart_interval {restart_interval} is outside 1..=1024")));
        }
        Ok(BlockWriter {
            block_size,
            restart_interval,
            block: Vec::with_capacity(block_size + 1024),
            restarts: Vec::new(),
            since_restart: 0,
            last_key: Vec::new(),
            first_key: Vec::new(),
            offset: 0,
            index: 0u32.to_le_bytes().to_vec(),
            blocks: 0,
            checksum: crc32fast::Hasher::new(),
            meta: SortedMeta::default(),
            key_bytes_saved: 0,
            restarts_total: 0,
        })
    }

    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        let (key, row) = (record.key, record.row.as_bytes());
        self.meta.observe(&record.row);
        if self.block.is_empty() {
            self.first_key.clear();
            self.first_key.extend_from_slice(key);
        }
        let shared = if self.block.is_empty() || self.since_restart == self.restart_interval {
            self.restarts.push(self.block.len() as u32);
            self.restarts_total += 1;
            self.since_restart = 0;
            0
        } else {
            self.last_key.iter().zip(key).take_while(|(a, b)| a == b).count()
        };
        put_varint(&mut self.block, shared as u64);
        put_varint(&mut self.block, (key.len() - shared) as u64);
        put_varint(&mut self.block, row.len() as u64);
        self.block.extend_from_slice(&key[shared..]);
        self.block.extend_from_slice(row);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.since_restart += 1;
        self.key_bytes_saved += shared as u64;
        if self.block.len() >= self.block_size {
            self.close_block(out);
        }
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        self.close_block(tail);
        self.index[..4].copy_from_slice(&self.blocks.to_le_bytes());
        let footer_at = tail.len();
        tail.extend_from_slice(&u64::from(self.blocks).to_le_bytes());
        tail.extend_from_slice(&self.meta.rows().to_le_bytes());
        tail.extend_from_slice(&crc32fast::hash(&self.index).to_le_bytes());
        let footer_crc = crc32fast::hash(&tail[footer_at..]);
        tail.extend_from_slice(&footer_crc.to_le_bytes());
        tail.extend_from_slice(&MAGIC.to_le_bytes());
        debug_assert_eq!(tail.len() - footer_at, FOOTER);
        let checksum = u64::from(std::mem::take(&mut self.checksum).finalize());
        Ok(Finished { index: std::mem::take(&mut self.index), meta: self.meta.finish(checksum) })
    }

    fn stats(&self) -> Stats {
        vec![
            ("rows".into(), self.meta.rows()),
            ("bytes".into(), self.offset + self.block.len() as u64),
            ("blocks".into(), u64::from(self.blocks)),
            ("key-bytes-saved".into(), self.key_bytes_saved),
            ("restarts".into(), self.restarts_total),
        ]
    }
}

memlab_sdk::export!(serializer: BlockWriter);
