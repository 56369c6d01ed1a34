//! The `output` import (WIT 0.8.0): where `cursor.next`, `load` and
//! `writer.write` hand their answer. wasmtime lifts a returned list into a
//! new `Vec` after the guest's post-return, so each answer cost the flush
//! thread an allocation; `put`'s argument is read where it lies, during
//! the call, into a buffer the store keeps and the caller swaps with its
//! own. Linked by hand: bindgen would lift the argument into a `Vec` too.

use memlab_sdk::Packed;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, WasmList};

use super::store::StoreCtx;
use super::wasm::Caller;
use crate::seam::Fault;

/// What the call in progress answers through `put`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Expects {
    /// Nothing: a `put` breaks the contract (output contract 2).
    #[default]
    Nothing,
    /// A `packed` batch, checked for its layout as it is copied.
    Packed,
    /// A segment's bytes.
    Bytes,
}

/// A store's answer buffers and what the call in progress did with them.
#[derive(Debug, Default)]
pub(super) struct Answer {
    expects: Expects,
    puts: u32,
    packed: Packed,
    bytes: Vec<u8>,
    /// The first contract break `put` saw, reported when the call ends.
    pub(super) broke: Option<String>,
}

impl Answer {
    fn put(&mut self, wire: &[u8]) {
        self.puts += 1;
        let broke = match (self.expects, self.puts) {
            (Expects::Nothing, _) => Some("called `output.put` from a call that does not answer through it".to_string()),
            (_, 2) => Some("called `output.put` twice in one call".to_string()),
            (_, 3..) => None,
            (Expects::Packed, _) => self.packed.copy_from_wire(wire).err().map(|e| format!("its answer through `output.put`: {e}")),
            (Expects::Bytes, _) => {
                // A fresh buffer, not `realloc`, which would copy the old bytes.
                if self.bytes.capacity() < wire.len() {
                    self.bytes = Vec::with_capacity(wire.len());
                }
                self.bytes.clear();
                self.bytes.extend_from_slice(wire);
                None
            }
        };
        if self.broke.is_none() {
            self.broke = broke;
        }
    }
}

/// Defines `put` for every instance `linker` makes.
pub(super) fn add_to_linker(linker: &mut Linker<StoreCtx>) -> wasmtime::Result<()> {
    linker.instance(&super::interface_name("output"))?.func_wrap("put", put)
}

fn put(mut cx: StoreContextMut<'_, StoreCtx>, (list,): (WasmList<u8>,)) -> wasmtime::Result<()> {
    // The buffers leave the store while the guest's bytes are borrowed
    // from it; moving them moves three pointers, not the bytes.
    let mut answer = std::mem::take(&mut cx.data_mut().answer);
    answer.put(list.as_le_slice(&cx));
    cx.data_mut().answer = answer;
    Ok(())
}

impl Caller {
    /// Runs `call`, which answers a batch through `put`, and swaps the
    /// answer into `out` (whose old buffer the store keeps for the next).
    pub(super) fn answer_packed<R>(&mut self, out: &mut Packed, call: impl FnOnce(&mut Self) -> Result<R, Fault>) -> Result<R, Fault> {
        let r = self.answering(Expects::Packed, call)?;
        std::mem::swap(out, &mut self.store.data_mut().answer.packed);
        Ok(r)
    }

    /// Runs `call`, which answers bytes through `put`, into `out`.
    pub(super) fn answer_bytes<R>(&mut self, out: &mut Vec<u8>, call: impl FnOnce(&mut Self) -> Result<R, Fault>) -> Result<R, Fault> {
        let r = self.answering(Expects::Bytes, call)?;
        std::mem::swap(out, &mut self.store.data_mut().answer.bytes);
        Ok(r)
    }

    fn answering<R>(&mut self, expects: Expects, call: impl FnOnce(&mut Self) -> Result<R, Fault>) -> Result<R, Fault> {
        let answer = &mut self.store.data_mut().answer;
        (answer.expects, answer.puts) = (expects, 0);
        let result = call(self);
        let answer = &mut self.store.data_mut().answer;
        let puts = std::mem::replace(&mut answer.puts, 0);
        answer.expects = Expects::Nothing;
        match result {
            Ok(_) if puts == 0 => Err(Fault::Contract("returned without handing its answer to `output.put`".into())),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answering(expects: Expects, puts: &[&[u8]]) -> Answer {
        let mut answer = Answer { expects, ..Answer::default() };
        puts.iter().for_each(|wire| answer.put(wire));
        answer
    }

    #[test]
    fn one_put_of_a_valid_batch_is_the_answer() {
        let mut batch = Packed::new();
        batch.push(b"row");
        let wire = batch.clone().into_wire();
        let answer = answering(Expects::Packed, &[&wire]);
        assert_eq!((answer.packed, answer.broke), (batch, None));
    }

    #[test]
    fn a_put_the_call_did_not_expect_a_second_put_or_a_bad_layout_break_the_contract() {
        let wire = Packed::new().into_wire();
        for (expects, puts, says) in [
            (Expects::Nothing, vec![&wire[..]], "does not answer"),
            (Expects::Bytes, vec![&wire[..], &wire[..], &wire[..]], "twice"),
            (Expects::Packed, vec![&b"\x01"[..]], "its answer"),
        ] {
            let broke = answering(expects, &puts).broke.unwrap_or_default();
            assert!(broke.contains(says), "{expects:?}: {broke}");
        }
    }
}
