//! A memtable or an allocator under check: paired in a shard with a
//! bundled partner of the other kind, in a pool drawn as a bench's is.

use std::sync::Arc;

use super::{CheckOptions, DESCRIBE, Properties, Property, UNKNOWN_PARAMS, defaults, describe_result, unknown_param_result, unknown_params};
use crate::plugin::{Plugin, PluginHost};
use crate::seam::{Kind, SeamError};
use crate::workload::SplitMix;

/// The budgets (`memtable_space`) the shipped configs give a bench's
/// pool, held to them by a test: check's shards reserve from one of these,
/// in a drawn counting mode, so no pool tells a check from a bench.
pub const BENCH_POOLS: [u64; 7] = [4 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20, 1 << 30];

/// What a check round's shard may hold: its rows, its index and its
/// 1 MiB values (about 15 in a round of 5,000 rows), with room.
pub(crate) const ROUND_NEED: u64 = 64 << 20;

/// A memtable or allocator under check, paired in a shard with a bundled
/// partner of the other kind.
pub(crate) struct ShardSubject<'a> {
    host: &'a Arc<PluginHost>,
    plugin: &'a Arc<Plugin>,
    pub(crate) params: &'a [(String, String)],
    /// The plugin under check and its bundled partner, in the runtime
    /// checked: wasm, or the native build (`--native`).
    subject: crate::seam::Strategy,
    partner: crate::seam::Strategy,
    /// Whether the runtime checked is the native build.
    native: bool,
    /// What draws the next shard's pool: a round's seed, so its replay
    /// and its shrinking reserve from the pool it failed in.
    draw: std::cell::Cell<u64>,
    /// The bytes the shards about to be made may hold at most.
    need: std::cell::Cell<u64>,
}

impl<'a> ShardSubject<'a> {
    /// Pairs `plugin` with the bundled `btree` or `per-row`.
    pub(crate) fn new(host: &'a Arc<PluginHost>, plugin: &'a Arc<Plugin>, options: &'a CheckOptions) -> Result<Self, Property> {
        Self::with_partner(host, plugin, options).map_err(|e| Property::fail("set-up", e.to_string()))
    }

    pub(super) fn with_partner(host: &'a Arc<PluginHost>, plugin: &'a Arc<Plugin>, options: &'a CheckOptions) -> Result<Self, SeamError> {
        let (name, kind) = if plugin.kind == Kind::Allocator { ("btree", Kind::Memtable) } else { ("per-row", Kind::Allocator) };
        let (subject, partner) = match &options.native {
            None => (host.strategy(plugin), host.strategy(&host.load_as(name, kind)?)),
            Some(n) => (n.clone(), crate::native::bundled(name, kind)?),
        };
        let (draw, need) = (std::cell::Cell::new(options.seed), std::cell::Cell::new(ROUND_NEED));
        Ok(ShardSubject { host, plugin, params: &options.params, subject, partner, native: options.native.is_some(), draw, need })
    }

    /// A fresh shard with the plugin under check given `params`, in a
    /// pool drawn as `pool` says.
    pub(crate) fn shard(&self, params: &[(String, String)]) -> Result<crate::seam::Shard, SeamError> {
        let pool = Arc::new(self.pool());
        match self.plugin.kind {
            Kind::Allocator => self.partner.shard(&[], &self.subject, params, pool, 0),
            _ => self.subject.shard(params, &self.partner, &[], pool, 0),
        }
    }

    /// A fresh shard of the native build under check and the bundled
    /// concurrent partner, taking concurrent writers; `None` where the
    /// build's calls are serialized, or no native build is checked.
    pub(crate) fn shared(&self, params: &[(String, String)]) -> Result<Option<crate::seam::Shard>, SeamError> {
        if !self.native {
            return Ok(None);
        }
        let pool = Arc::new(self.pool());
        let shard = match self.plugin.kind {
            Kind::Allocator => crate::native::bundled("lockfree", Kind::Memtable)?.shard(&[], &self.subject, params, pool, 0)?,
            _ => self.subject.shard(params, &crate::native::bundled("cas-region", Kind::Allocator)?, &[], pool, 0)?,
        };
        Ok(shard.share().ok())
    }

    /// Shards made from now on draw their pool from `seed` and hold up to
    /// `need` bytes.
    pub(crate) fn draw_from(&self, seed: u64, need: u64) {
        self.draw.set(seed);
        self.need.set(need);
    }

    /// A bench's pool: a shipped budget whose hard limit (twice it) holds
    /// what the property stores, and any counting mode, both drawn.
    fn pool(&self) -> crate::pool::MemoryPool {
        let mut rng = SplitMix::new(&[self.draw.get(), 0x9001]);
        let fits: Vec<u64> = BENCH_POOLS.iter().copied().filter(|b| 2 * b >= self.need.get()).collect();
        let budget = match fits.len() {
            0 => self.need.get().next_power_of_two(),
            n => fits[rng.below(n as u64) as usize],
        };
        let modes = crate::pool::PoolMode::ALL;
        crate::pool::MemoryPool::new(budget, modes[rng.below(modes.len() as u64) as usize])
    }

    /// What the plugin under check, created with `params`, says of itself.
    pub(super) fn described(&self, params: &[(String, String)]) -> Result<memlab_sdk::Description, SeamError> {
        self.shard(params).and_then(|mut s| s.describe()).map(|(m, a)| if self.plugin.kind == Kind::Allocator { a } else { m })
    }

    /// The kind under check.
    pub(crate) fn kind(&self) -> Kind {
        self.plugin.kind
    }

    /// `describe`, its defaults, and the refusal of unknown parameters.
    pub(crate) fn common_properties(&self, properties: &mut Properties) {
        properties.run(DESCRIBE, || describe_result(self.plugin, self.params, self.described(self.params)));
        properties.run(defaults::DEFAULTS, || defaults::property(self.host, self.plugin, self.params));
        properties.run(defaults::EFFECT, || defaults::effect_property(self.host, self.plugin, self.params));
        properties.run(UNKNOWN_PARAMS, || unknown_param_result(self.shard(&unknown_params(self.params)).map(|_| ())));
    }
}
