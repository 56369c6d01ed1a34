//! Spot checks of a serializer at verify time, beyond reading every
//! segment in order: keys picked by the per-process secret are read back
//! by key (`reader.get`), present and absent, and one damaged copy of the
//! segment the secret picks must be reported damaged. A format that answers `get`
//! wrongly, or whose checksum skips some of its data, is caught in the
//! run it is measured in (serializer contract 3 and 5).

use memlab_sdk::{FlushRecord, Packed};

use crate::seam::{self, Op, Reader, SeamError, show_key};
use crate::segment::LoadedSegment;

use super::ReaderFactory;
use crate::flush::SerializerFactory;

/// Keys per `reader.get` call.
const KEYS_PER_CALL: usize = 100;

/// What one segment's in-order pass picked to read again by key.
#[derive(Default)]
pub(super) struct Picks {
    every: u64,
    /// Keys present, with the record `next` returned for each.
    present: Vec<(Vec<u8>, Vec<u8>)>,
    /// Keys just after a picked key: absent unless the next record has it.
    absent: Vec<Vec<u8>>,
}

impl Picks {
    pub(super) fn new(every: u64) -> Self {
        Picks { every, ..Picks::default() }
    }

    /// Sees one record of the in-order pass (its key, its hash, its bytes).
    pub(super) fn see(&mut self, key: &[u8], hash: u64, record: &[u8]) {
        if self.absent.last().is_some_and(|a| a.as_slice() == key) {
            self.absent.pop();
        }
        if !seam::picked(hash, self.every) {
            return;
        }
        self.present.push((key.to_vec(), record.to_vec()));
        // The smallest key above `key`: absent unless the next record is it.
        self.absent.push([key, &[0]].concat());
    }

    /// Reads the picks back by key: each present key's record as `next`
    /// returned it, each absent key empty.
    pub(super) fn check(&self, reader: &mut Reader) -> Result<u64, SeamError> {
        let plugin = reader.plugin().to_string();
        let wrong = |detail: String| SeamError::contract(&plugin, Op::ReaderGet, 0, detail);
        let asked: Vec<(&[u8], Option<&[u8]>)> =
            self.present.iter().map(|(k, r)| (k.as_slice(), Some(r.as_slice()))).chain(self.absent.iter().map(|k| (k.as_slice(), None))).collect();
        for chunk in asked.chunks(KEYS_PER_CALL) {
            let mut keys = Packed::with_capacity(chunk.len(), chunk.iter().map(|(k, _)| k.len()).sum());
            chunk.iter().for_each(|(k, _)| keys.push(k));
            let answers = reader.get(keys)?;
            for ((key, want), got) in chunk.iter().zip(answers.iter()) {
                match (want, got.is_empty()) {
                    (Some(want), false) if *want == got => {}
                    (None, true) => {}
                    (Some(_), true) => return Err(wrong(format!("answered absent for key {}, which the segment holds", show_key(key)))),
                    (None, false) => return Err(wrong(format!("answered key {}, which the segment does not hold", show_key(key)))),
                    (Some(_), false) => return Err(wrong(format!("read key {} back by key unlike the record `next` returned", show_key(key)))),
                }
            }
        }
        Ok(asked.len() as u64)
    }

    /// Where in `data` a late picked row's last value byte lies, if the
    /// format stores rows as they are: damage there keeps the file's
    /// structure, so only a checksum can see it.
    fn value_byte(&self, data: &[u8]) -> Option<usize> {
        self.present.iter().rev().take(8).find_map(|(_, raw)| {
            let row = FlushRecord::decode(raw).ok()?.row;
            let bytes = row.as_bytes();
            if row.tombstone || bytes.len() < 32 {
                return None;
            }
            data.windows(bytes.len()).rposition(|w| w == bytes).map(|at| at + bytes.len() - 1)
        })
    }
}

/// Reads damaged copies of `segment`, each with one byte of its data
/// changed, and requires the reader to report each: an error from `open`
/// or `next`, never the records read whole. One byte at the secret's
/// offset, and one inside a late picked row's value where the format
/// keeps rows whole (else in the second half): a checksum over a prefix is
/// caught whatever the secret.
pub(super) fn damaged_copies(segment: &LoadedSegment, picks: &Picks, open: &ReaderFactory<'_>, name: &str) -> Result<(), SeamError> {
    let len = segment.data.len();
    if len < 2 {
        return Ok(());
    }
    damaged_copy(segment, open, name, seam::secret_offset(len))?;
    let late = picks.value_byte(&segment.data).unwrap_or(len / 2 + seam::secret_offset(len - len / 2));
    damaged_copy(segment, open, name, late)
}

/// Writes the picked rows of `segment` again through a fresh writer under
/// keys shaped as the router makes them (token, partition, clustering)
/// but not the rows' own (a secret partition and clustering each), then
/// reads them back whole and by key: they must come back byte for byte.
/// A format that rebuilds keys from the rows (types contract 3: keys are
/// never interpreted) is caught here, and so is one that keeps only the
/// keys it cannot rebuild verbatim: these look like the ones it can.
pub(super) fn foreign_keys(segment: &LoadedSegment, picks: &Picks, writer: &SerializerFactory, open: &ReaderFactory<'_>) -> Result<(), SeamError> {
    let secret = (seam::secret_offset(usize::MAX) as u64).to_be_bytes();
    let mut records: Vec<(Vec<u8>, Vec<u8>)> = picks
        .present
        .iter()
        .take(256)
        .filter_map(|(_, raw)| FlushRecord::decode(raw).ok().map(|r| r.row.as_bytes().to_vec()))
        .enumerate()
        .map(|(i, row)| {
            let partition = [secret.as_slice(), &(i as u32).to_be_bytes()].concat();
            let clustering = [secret.as_slice(), b"foreign"].concat();
            let mut key = Vec::new();
            crate::router::sort_key(crate::router::token(&partition), &partition, &clustering, &mut key);
            (key, row)
        })
        .collect();
    // A writer is handed keys in order, as a flush hands them.
    records.sort_by(|a, b| a.0.cmp(&b.0));
    if records.is_empty() {
        return Ok(());
    }
    let mut w = writer(0)?;
    let mut data = Vec::new();
    for chunk in records.chunks(64) {
        let mut p = Packed::new();
        chunk.iter().for_each(|(k, r)| p.push_with(|buf| memlab_sdk::encode_flush_record(buf, k, r)));
        data.extend(w.write(p)?);
    }
    let (tail, finished) = w.finish()?;
    data.extend(tail);
    let copy = LoadedSegment { meta: segment.meta.clone(), data, index: finished.index };
    let mut reader = open(&copy)?;
    let mut back = Vec::new();
    loop {
        let batch = reader.next(1 << 20)?;
        if batch.is_empty() {
            break;
        }
        back.extend(batch.iter().map(<[u8]>::to_vec));
    }
    for (i, (key, row)) in records.iter().enumerate() {
        let mut want = Vec::new();
        memlab_sdk::encode_flush_record(&mut want, key, row);
        if back.get(i) != Some(&want) {
            let detail = format!(
                "wrote {} records under router-shaped keys that are not their rows' own (the first {}) and read record {i} back different: its format interprets keys (types contract 3)",
                records.len(),
                show_key(&records[0].0)
            );
            return Err(SeamError::contract(reader.plugin(), Op::ReaderNext, 0, detail));
        }
    }
    let mut picked = Picks::new(1);
    for (raw, (key, _)) in back.iter().zip(&records) {
        picked.present.push((key.clone(), raw.clone()));
    }
    picked.check(&mut reader).map(|_| ())
}

fn damaged_copy(segment: &LoadedSegment, open: &ReaderFactory<'_>, name: &str, at: usize) -> Result<(), SeamError> {
    let mut copy = LoadedSegment { meta: segment.meta.clone(), data: segment.data.clone(), index: segment.index.clone() };
    copy.data[at] ^= 0x5a;
    let mut reader = match open(&copy) {
        Ok(reader) => reader,
        Err(e) if e.guest_error().is_some() => return Ok(()),
        Err(e) => return Err(e),
    };
    loop {
        match reader.next(1 << 20) {
            Ok(batch) if batch.is_empty() => break,
            Ok(_) => {}
            Err(e) if e.guest_error().is_some() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    let detail = format!(
        "read a copy of {name} with byte {at} of its {} data bytes changed and reported no damage: its checksum must cover every byte (serializer contract 3)",
        copy.data.len()
    );
    Err(SeamError::contract(reader.plugin(), Op::ReaderNext, 0, detail))
}
