//! A config's text: read bounded, and every error placed at its line,
//! in the user's own spelling.

use std::path::Path;

use super::ConfigError;

/// serde names a table's span, not the key, for an integer that fits no
/// TOML integer: find the key in the span whose value is too long.
pub(super) fn too_large(text: &str, span: std::ops::Range<usize>) -> Option<String> {
    // The span may be the table's header alone: look to the next table.
    let start = span.start.min(text.len());
    let end = text[span.end.min(text.len())..].find("\n[").map_or(text.len(), |at| span.end.min(text.len()) + at);
    let within = text.get(start..end)?;
    let first = text.get(..span.start)?.matches('\n').count();
    within.lines().enumerate().find_map(|(n, line)| {
        line.split([',', '{', '}']).find_map(|part| {
            let (key, value) = part.split_once('=')?;
            let value = value.trim().replace('_', "");
            let digits = value.strip_prefix('-').unwrap_or(&value);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && value.parse::<i64>().is_err())
                .then(|| format!("line {} (`{}`): `{}` = {value} is too large: TOML integers go up to {}", first + n + 1, quote(line), quote(key), i64::MAX))
        })
    })
}

/// Where `key` (a dotted path's last part) is set in `text`, for an error
/// that serde's spans cannot place: `line N (`...`): ` or nothing.
pub(super) fn key_at(text: &str, key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let found = text.lines().enumerate().find(|(_, l)| {
        let l = l.trim_start();
        l.strip_prefix(last).is_some_and(|rest| rest.trim_start().starts_with('=')) || l.contains(&format!(" {last} =")) || l.contains(&format!("{{{last} ="))
    });
    found.map(|(n, l)| format!("line {} (`{}`): ", n + 1, quote(l))).unwrap_or_default()
}

/// The largest config or profile file memlab reads (`/dev/zero` is not one).
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// A file's text, at most `MAX_TEXT_BYTES`; invalid UTF-8 is named by
/// line and byte.
pub(crate) fn read_text(path: &Path) -> Result<String, ConfigError> {
    let file = path.display().to_string();
    let bytes = crate::input::read(path, MAX_TEXT_BYTES, "config or profile").map_err(|e| match e {
        crate::input::ReadError::Io { source, .. } => ConfigError::Read { file: file.clone(), source },
        crate::input::ReadError::TooLarge { .. } => {
            ConfigError::Invalid { file: file.clone(), message: format!("larger than the {} MiB a config or profile may be", MAX_TEXT_BYTES >> 20) }
        }
        other => ConfigError::Invalid { file: file.clone(), message: other.reason() },
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        ConfigError::Invalid { file, message: format!("line {line}, byte {at}: not UTF-8 text (byte {:#04x})", bytes[at]) }
    })
}

pub(super) fn line_of(text: &str, offset: usize) -> String {
    let line_no = text.get(..offset).unwrap_or("").matches('\n').count() + 1;
    let line = quote(text.lines().nth(line_no - 1).unwrap_or(""));
    format!("line {line_no} (`{line}`)")
}

/// The most characters of a config line an error quotes.
const QUOTED_CHARS: usize = 120;

/// A config line as an error quotes it: trimmed and cut short, so the
/// reason that follows it is always shown whole (a terminal line is cut
/// at `util::text`'s limit, and a line of a config may be megabytes).
pub(super) fn quote(line: &str) -> String {
    let line = line.trim();
    let count = line.chars().count();
    if count <= QUOTED_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(QUOTED_CHARS).collect();
    format!("{cut}... ({} more characters)", count - QUOTED_CHARS)
}

/// toml's errors span several lines with a caret; keep the facts on one:
/// the line number, the line itself, and the message.
pub fn one_line(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(span) = e.span() else { return message.to_string() };
    if let Some(named) = too_large(text, span.clone()) {
        return named;
    }
    let start = span.start.min(text.len());
    let line_no = text.get(..start).unwrap_or("").matches('\n').count() + 1;
    let line = quote(text.lines().nth(line_no - 1).unwrap_or(""));
    format!("line {line_no} (`{line}`): {message}")
}
