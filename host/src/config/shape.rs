//! The config file's own spellings of settings that the runtime keeps as
//! its own enums: the file's shape is defined here, so renaming a runtime
//! variant cannot change what a config may write. Each converts into the
//! runtime's type once the config is checked.

use serde::Deserialize;

use crate::commitlog::Access;
use crate::pool::PoolMode;
use crate::write_path::Coalescing;

/// `pool = "..."`: how the pool counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum PoolSetting {
    CasLoop,
    #[default]
    FetchAdd,
    Striped,
    StripedPacked,
}

impl From<PoolSetting> for PoolMode {
    fn from(p: PoolSetting) -> Self {
        match p {
            PoolSetting::CasLoop => PoolMode::CasLoop,
            PoolSetting::FetchAdd => PoolMode::FetchAdd,
            PoolSetting::Striped => PoolMode::Striped,
            PoolSetting::StripedPacked => PoolMode::StripedPacked,
        }
    }
}

/// `commitlog_disk_access_mode = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum AccessSetting {
    #[default]
    Buffered,
    Direct,
}

impl From<AccessSetting> for Access {
    fn from(a: AccessSetting) -> Self {
        match a {
            AccessSetting::Buffered => Access::Buffered,
            AccessSetting::Direct => Access::Direct,
        }
    }
}

/// `coalescing = "none" | "group" | "adaptive" | { window = µs }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum CoalescingSetting {
    #[default]
    None,
    Group,
    Adaptive,
    Window(u32),
}

impl From<CoalescingSetting> for Coalescing {
    fn from(c: CoalescingSetting) -> Self {
        match c {
            CoalescingSetting::None => Coalescing::None,
            CoalescingSetting::Group => Coalescing::Group,
            CoalescingSetting::Adaptive => Coalescing::Adaptive,
            CoalescingSetting::Window(us) => Coalescing::Window(us),
        }
    }
}

/// What a config may write, named in every refusal.
const SPELLINGS: &str = "`\"none\"`, `\"group\"`, `\"adaptive\"` or `{ window = µs }`";

impl<'de> Deserialize<'de> for CoalescingSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CoalescingSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{SPELLINGS}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CoalescingSetting, E> {
                match v {
                    "none" => Ok(CoalescingSetting::None),
                    "group" => Ok(CoalescingSetting::Group),
                    "adaptive" => Ok(CoalescingSetting::Adaptive),
                    other => Err(E::custom(format!("coalescing `{other}` is none of {SPELLINGS}"))),
                }
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<CoalescingSetting, M::Error> {
                use serde::de::Error;
                let mut window = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "window" if window.is_none() => window = Some(map.next_value::<u32>()?),
                        other => return Err(M::Error::custom(format!("coalescing takes one key, `window` (µs), not `{other}`: write {SPELLINGS}"))),
                    }
                }
                window.map(CoalescingSetting::Window).ok_or_else(|| M::Error::custom(format!("coalescing `{{ }}` names no window: write {SPELLINGS}")))
            }
        }
        d.deserialize_any(Visit)
    }
}
