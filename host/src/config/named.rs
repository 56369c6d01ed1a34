//! Named strategy configurations (`[memtable.NAME]`), as Cassandra's
//! `memtable.configurations`: followed along `inherits`, merged child-last,
//! and plugin paths taken from the config's folder.

use std::collections::BTreeMap;
use std::path::Path;

use super::ParamValue;
use super::raw::Named;
use super::text::line_of;
use crate::seam::Kind;

/// A plugin path in a config is taken from the config's folder, like
/// every other path in it; a bundled name or an absolute path stays as
/// it is. A config written for the old rule (paths from the current
/// folder) is told what changed.
pub(super) fn locate(base: &Path, kind: Kind, spec: &str) -> Result<String, String> {
    let path = Path::new(spec);
    if crate::registry::find_kind(spec, kind).is_some() || path.is_absolute() || spec.is_empty() || base == Path::new(".") {
        return Ok(spec.to_string());
    }
    let from_config = base.join(path);
    if from_config.exists() || !path.exists() {
        return Ok(from_config.display().to_string());
    }
    Err(format!(
        "`{spec}` is not in the config's folder ({}), but in the current one: plugin paths in a config are taken from the config's folder, as profiles and streams are; write it relative to the config, or absolute",
        base.display()
    ))
}

/// A strategy as a variant ends up using it.
pub(super) struct Resolved {
    pub(super) plugin: String,
    pub(super) params: BTreeMap<String, ParamValue>,
    pub(super) shards: Option<usize>,
}

impl Resolved {
    /// A bundled plugin with no parameters.
    pub(super) fn bundled(plugin: &str) -> Self {
        Resolved { plugin: plugin.into(), params: BTreeMap::new(), shards: None }
    }
}

/// Follows `inherits` from the configuration `name` (or takes `name` as a
/// plugin when no configuration has it), merging parameters child-last.
pub(super) fn resolve(
    text: &str,
    kind: Kind,
    named: &BTreeMap<String, Named>,
    name: &toml::Spanned<String>,
    used: &mut Vec<String>,
) -> Result<Resolved, String> {
    let Some(mut current) = named.get(name.get_ref()) else {
        return Ok(Resolved { plugin: name.get_ref().clone(), params: BTreeMap::new(), shards: None });
    };
    let mut chain = vec![name.get_ref().clone()];
    // Beside the chain, for a lookup per link: a long chain stays linear.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::from([name.get_ref().as_str()]);
    let mut layers = vec![current];
    while let Some(parent) = &current.inherits {
        let at = || line_of(text, parent.span().start);
        current = named
            .get(parent.get_ref())
            .ok_or_else(|| format!("{}: `inherits = \"{}\"` names no `[{kind}.{}]` configuration", at(), parent.get_ref(), parent.get_ref()))?;
        if !seen.insert(parent.get_ref().as_str()) {
            return Err(format!("{}: `[{kind}.*]` configurations inherit in a cycle: {} -> {}", at(), chain.join(" -> "), parent.get_ref()));
        }
        chain.push(parent.get_ref().clone());
        layers.push(current);
    }
    let plugin = current.plugin.clone().unwrap_or_default();
    let mut params = BTreeMap::new();
    let mut shards = None;
    for layer in layers.iter().rev() {
        params.extend(layer.params.clone());
        shards = layer.shards.or(shards);
    }
    used.push(format!("{kind} {}", chain.join(" < ")));
    Ok(Resolved { plugin, params, shards })
}
