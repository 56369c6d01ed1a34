//! A strategy parameter's value as a config writes it: exact integers
//! (one past TOML's range is refused with its digits, never rounded to
//! a float), floats, strings and booleans; plugins receive it as text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// A parameter value as TOML writes it; plugins receive it as a string.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A string.
    Text(String),
    /// An integer.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = ParamValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, an integer, a float or a boolean")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ParamValue, E> {
                Ok(ParamValue::Text(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ParamValue, E> {
                Ok(ParamValue::Integer(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ParamValue, E> {
                i64::try_from(v).map(ParamValue::Integer).map_err(|_| E::custom(format!("the integer {v} is too large: TOML integers go up to {}", i64::MAX)))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<ParamValue, E> {
                // An integer past i64 reaches here as a float, rounded: it
                // is refused, never run as a number the user did not write.
                if v.fract() == 0.0 && v.abs() >= 9.223_372_036_854_776e18 {
                    return Err(E::custom(format!("an integer of about {v:e} is too large: TOML integers go up to {}", i64::MAX)));
                }
                Ok(ParamValue::Float(v))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<ParamValue, E> {
                Ok(ParamValue::Bool(v))
            }
        }
        d.deserialize_any(Visit)
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Text(s) => f.write_str(s),
            ParamValue::Integer(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Bool(b) => write!(f, "{b}"),
        }
    }
}
