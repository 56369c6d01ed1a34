//! A record's numbers, held to what a run can measure before the record
//! is used: a record is untrusted (shared, downloaded), and a crafted one
//! may hold any number. Every integer is at most 2^53 (exact as a float,
//! far above any count, byte total or time in ns a run records), except
//! where the field is a seed or a digest; every float is finite. Sums and
//! products of such numbers in a report stay far from overflow.

use serde_json::Value;

/// The largest integer a record holds outside its seeds and digests.
pub const MAX_INT: u64 = 1 << 53;

/// Fields whose integers span all of u64 (or u128) by design.
const WHOLE_RANGE: [&str; 3] = ["seed", "digest", "expected_digest"];

/// The first number out of bounds, named by its path in the record.
pub(super) fn check(record: &Value) -> Result<(), String> {
    walk(record, &mut String::new(), false)
}

fn walk(v: &Value, path: &mut String, whole: bool) -> Result<(), String> {
    match v {
        Value::Number(n) => {
            let bad = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => !whole && u > MAX_INT,
                (None, Some(i), _) => i.unsigned_abs() > MAX_INT,
                (None, None, Some(f)) => !whole && !f.is_finite(),
                _ => false,
            };
            if bad {
                return Err(format!("`{path}` = {n}: above the 2^53 any figure of a run can reach; the record is refused"));
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, whole)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Object(map) => {
            for (key, item) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                walk(item, path, WHOLE_RANGE.contains(&key.as_str()))?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_out_of_range_number_is_named_by_its_path() {
        let ok = serde_json::json!({ "variants": [{ "seed": u64::MAX, "rows": 1u64 << 53 }] });
        assert_eq!(super::check(&ok), Ok(()));
        let bad = serde_json::json!({ "variants": [{ "flushes": [{ "wall": { "secs": u64::MAX } }] }] });
        let err = super::check(&bad).expect_err("refused");
        assert!(err.contains("`variants[0].flushes[0].wall.secs` = 18446744073709551615"), "{err}");
    }
}
