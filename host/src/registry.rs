//! The strategy registry: every bundled plugin's component, embedded in
//! the binary. `host/build.rs` generates this table, and `native`'s table
//! of twins, from `host/Cargo.toml`: a plugin crate listed there under
//! `[dependencies]` with a `[package.metadata.memlab]` kind is bundled, so
//! adding a strategy is that one line plus its crate.

use crate::seam::Kind;

/// One bundled plugin.
#[derive(Debug)]
pub struct Bundled {
    /// The name config uses (the strategy's `NAME`).
    pub name: &'static str,
    /// What it implements.
    pub kind: Kind,
    /// The crate it was built from (under `plugins/`).
    pub crate_name: &'static str,
    /// The component's bytes.
    pub component: &'static [u8],
}

static BUNDLED: &[Bundled] = include!(concat!(env!("OUT_DIR"), "/registry.rs"));

/// Every bundled plugin, in table order.
pub fn all() -> &'static [Bundled] {
    BUNDLED
}

/// The bundled plugin of `kind` called `name`.
pub fn find_kind(name: &str, kind: Kind) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.name == name && b.kind == kind)
}

/// The first bundled plugin called `name`.
pub fn find(name: &str) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.name == name)
}

/// The bundled plugin a description claims to be, when the plugin was
/// configured as something else (a file or a crate folder): a name of
/// its own is required, or its figures would be published as ours.
pub fn impersonated(kind: Kind, configured: &str, described: &str) -> Option<&'static Bundled> {
    find_kind(described, kind).filter(|b| b.name != configured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_a_bundled_strategy_with_a_native_twin() {
        for kind in Kind::ALL {
            assert!(all().iter().any(|b| b.kind == kind), "no bundled {kind}");
        }
        for b in all() {
            assert!(crate::native::bundled(b.name, b.kind).is_ok(), "{} has no native twin", b.name);
        }
    }
}
