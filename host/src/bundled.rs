//! The plugins built with memlab and embedded in the binary.

use crate::plugin::Kind;

/// One embedded plugin.
#[derive(Debug)]
pub struct Bundled {
    /// The name config uses.
    pub name: &'static str,
    /// What it implements.
    pub kind: Kind,
    /// The crate it was built from (under `plugins/`).
    pub crate_name: &'static str,
    /// The component's bytes.
    pub component: &'static [u8],
}

static BUNDLED: &[Bundled] = include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// Every bundled plugin, in build order.
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
