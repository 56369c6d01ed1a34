//! Untrusted text on its way to a terminal or a report: a plugin's name,
//! its messages and errors, a record's strings. Control characters are
//! shown escaped (`\x1b`, `\u{7}`), never sent raw, and long text is cut
//! and marked, so no plugin can move a cursor, ring a bell or flood a
//! screen through memlab.

/// At most this many characters of one untrusted text are shown.
pub const SHOWN_CHARS: usize = 2_000;

/// `text` with control characters escaped (newlines and tabs too, unless
/// `lines`), cut after `SHOWN_CHARS` characters with the cut marked.
pub fn clean_with(text: &str, lines: bool) -> String {
    let mut out = String::with_capacity(text.len().min(SHOWN_CHARS + 64));
    for (shown, c) in text.chars().enumerate() {
        if shown == SHOWN_CHARS {
            let rest = text.chars().count() - shown;
            out.push_str(&format!("... ({rest} more characters cut)"));
            break;
        }
        match c {
            '\n' | '\t' if lines => out.push(c),
            c if c.is_control() || is_bidi(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// `text` on one line: every control character escaped, long text cut.
pub fn clean(text: &str) -> String {
    clean_with(text, false)
}

/// Longest line `for_terminal` passes whole (a comparison of many
/// variants is wide; a plugin's flood is wider).
const LINE_CHARS: usize = 20_000;

/// A whole output on its way to a terminal: control characters other
/// than newline and tab escaped, and any line past `LINE_CHARS` cut.
pub fn for_terminal(text: &str) -> String {
    if text.chars().all(|c| (!c.is_control() || c == '\n' || c == '\t') && !is_bidi(c)) && text.lines().all(|l| l.len() <= LINE_CHARS) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (shown, c) in line.chars().enumerate() {
            if shown == LINE_CHARS {
                out.push_str(&format!("... ({} more characters cut)", line.chars().count() - shown));
                break;
            }
            match c {
                '\t' => out.push(c),
                c if c.is_control() || is_bidi(c) => out.extend(c.escape_default()),
                c => out.push(c),
            }
        }
    }
    out
}

/// Bidirectional overrides reorder what a terminal shows ("Trojan
/// Source"): escaped like control characters.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

#[cfg(test)]
mod tests {
    use super::{SHOWN_CHARS, clean, clean_with};

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        assert_eq!(clean("a\u{1b}[2Jb\u{7}"), "a\\u{1b}[2Jb\\u{7}");
        assert_eq!(clean("two\nlines"), "two\\nlines");
        assert_eq!(clean_with("two\nlines", true), "two\nlines");
        assert_eq!(clean("x\u{202e}y"), "x\\u{202e}y");
        let long = "y".repeat(SHOWN_CHARS + 10);
        assert!(clean(&long).ends_with("... (10 more characters cut)"));
        assert_eq!(clean("plain, ünïcode"), "plain, ünïcode");
        assert_eq!(super::for_terminal("a\nb\u{1b}c\n"), "a\nb\\u{1b}c\n");
    }
}
