//! A boundary probe for benches: a tiny hand-written component whose
//! functions take a batch of rows as `list<list<u8>>`, as the packed pair
//! `list<u8>, list<u32>`, as one flat `list<u8>`, or take nothing, and do
//! nothing else, so a bench sees the canonical ABI's cost of each shape
//! (and of a bare crossing) and nothing more.

use wasmtime::Store;
use wasmtime::component::{Component, Func, Linker};

use super::PluginHost;
use crate::seam::LoadError;

const PROBE: &str = r#"
(component
  (core module $m
    (memory (export "memory") 1)
    (global $top (mut i32) (i32.const 8))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32) (local $end i32) (local $have i32)
      (local.set $p (i32.and (i32.add (global.get $top) (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (local.set $end (i32.add (local.get $p) (local.get 3)))
      (local.set $have (i32.shl (memory.size) (i32.const 16)))
      (if (i32.gt_u (local.get $end) (local.get $have))
        (then
          (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (local.get $have)) (i32.const 16)) (i32.const 1)))
                      (i32.const -1))
            (then unreachable))))
      (global.set $top (local.get $end))
      (local.get $p))
    ;; The arguments are already in memory: later calls may reuse it.
    (func (export "take-list") (param i32 i32) (result i32)
      (global.set $top (i32.const 8))
      (local.get 1))
    (func (export "take-packed") (param i32 i32 i32 i32) (result i32)
      (global.set $top (i32.const 8))
      (local.get 3))
    (func (export "take-flat") (param i32 i32) (result i32)
      (global.set $top (i32.const 8))
      (local.get 1))
    (func (export "take-nothing") (result i32)
      (i32.const 0)))
  (core instance $i (instantiate $m))
  (func (export "take-list") (param "rows" (list (list u8))) (result u32)
    (canon lift (core func $i "take-list") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (func (export "take-packed") (param "data" (list u8)) (param "ends" (list u32)) (result u32)
    (canon lift (core func $i "take-packed") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (func (export "take-flat") (param "data" (list u8)) (result u32)
    (canon lift (core func $i "take-flat") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (func (export "take-nothing") (result u32)
    (canon lift (core func $i "take-nothing"))))
"#;

/// The probe, instantiated.
pub struct AbiProbe {
    store: Store<()>,
    take_list: Func,
    take_packed: Func,
    take_flat: Func,
    take_nothing: Func,
}

fn engine_error(e: wasmtime::Error) -> LoadError {
    LoadError::engine(format!("boundary probe: {e:#}"))
}

impl PluginHost {
    /// Builds the boundary probe on this host's engine.
    pub fn abi_probe(&self) -> Result<AbiProbe, LoadError> {
        let component = Component::new(&self.engine, PROBE).map_err(engine_error)?;
        let mut store = Store::new(&self.engine, ());
        let instance = Linker::new(&self.engine).instantiate(&mut store, &component).map_err(engine_error)?;
        let missing = |name: &str| LoadError::engine(format!("boundary probe: no `{name}` export"));
        let take_list = instance.get_func(&mut store, "take-list").ok_or_else(|| missing("take-list"))?;
        let take_packed = instance.get_func(&mut store, "take-packed").ok_or_else(|| missing("take-packed"))?;
        let take_flat = instance.get_func(&mut store, "take-flat").ok_or_else(|| missing("take-flat"))?;
        let take_nothing = instance.get_func(&mut store, "take-nothing").ok_or_else(|| missing("take-nothing"))?;
        Ok(AbiProbe { store, take_list, take_packed, take_flat, take_nothing })
    }
}

impl AbiProbe {
    /// Passes `rows` as `list<list<u8>>`; returns how many arrived.
    pub fn take_list(&mut self, rows: &[Vec<u8>]) -> Result<u32, LoadError> {
        let f = self.take_list.typed::<(&[Vec<u8>],), (u32,)>(&self.store).map_err(engine_error)?;
        Ok(f.call(&mut self.store, (rows,)).map_err(engine_error)?.0)
    }

    /// Passes the same rows packed: bytes back to back and end offsets.
    pub fn take_packed(&mut self, data: &[u8], ends: &[u32]) -> Result<u32, LoadError> {
        let f = self.take_packed.typed::<(&[u8], &[u32]), (u32,)>(&self.store).map_err(engine_error)?;
        Ok(f.call(&mut self.store, (data, ends)).map_err(engine_error)?.0)
    }

    /// Passes the rows as one flat list (lengths inside the bytes).
    pub fn take_flat(&mut self, data: &[u8]) -> Result<u32, LoadError> {
        let f = self.take_flat.typed::<(&[u8],), (u32,)>(&self.store).map_err(engine_error)?;
        Ok(f.call(&mut self.store, (data,)).map_err(engine_error)?.0)
    }

    /// The crossing's cost, for the time breakdown: ns per call (a bare
    /// crossing) and ns per byte carried in (a flat list of `bytes`), each
    /// the best of a few rounds of `calls`, as a noisy machine allows.
    pub fn crossing_cost(&mut self, calls: u32, bytes: usize) -> Result<(f64, f64), LoadError> {
        let nothing = self.take_nothing.typed::<(), (u32,)>(&self.store).map_err(engine_error)?;
        let flat = self.take_flat.typed::<(&[u8],), (u32,)>(&self.store).map_err(engine_error)?;
        let data = vec![0u8; bytes.max(1)];
        let (mut call, mut carried) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..3 {
            let started = std::time::Instant::now();
            for _ in 0..calls {
                nothing.call(&mut self.store, ()).map_err(engine_error)?;
            }
            call = call.min(started.elapsed().as_nanos() as f64 / f64::from(calls.max(1)));
            let started = std::time::Instant::now();
            for _ in 0..calls / 16 + 1 {
                flat.call(&mut self.store, (&data,)).map_err(engine_error)?;
            }
            carried = carried.min(started.elapsed().as_nanos() as f64 / f64::from(calls / 16 + 1));
        }
        Ok((call, ((carried - call) / data.len() as f64).max(0.0)))
    }

    /// A crossing with no arguments: the floor under any call.
    pub fn take_nothing(&mut self) -> Result<u32, LoadError> {
        let f = self.take_nothing.typed::<(), (u32,)>(&self.store).map_err(engine_error)?;
        Ok(f.call(&mut self.store, ()).map_err(engine_error)?.0)
    }
}
