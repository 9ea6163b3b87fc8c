//! The checks serde_json leaves to its caller on the JSON of checkpoints (safetensors headers,
//! shard indexes, config.json): a name given twice in one object (serde_json keeps the last one
//! silently) and nesting deeper than any checkpoint uses. A failed check is an error at the byte
//! where the JSON parser stood.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// The deepest nesting accepted (a safetensors header is 3 deep, an index 2, config.json ~5).
pub(crate) const MAX_DEPTH: usize = 32;

/// `Ok` if `text` is one JSON value with no repeated name in any object and at most
/// [`MAX_DEPTH`] levels; otherwise the message and the byte offset in `text`.
pub(crate) fn check_json(text: &[u8]) -> Result<(), (String, u64)> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let checked = Checked { depth: 0 }.deserialize(&mut deserializer).and_then(|()| deserializer.end());
    checked.map_err(|e| (e.to_string(), byte_offset(text, e.line(), e.column())))
}

/// serde_json reports line and column (from 1); the byte they point at.
fn byte_offset(text: &[u8], line: usize, column: usize) -> u64 {
    let mut start = 0usize;
    for _ in 1..line {
        match text[start..].iter().position(|&b| b == b'\n') {
            Some(k) => start += k + 1,
            None => break,
        }
    }
    (start + column.saturating_sub(1)).min(text.len()) as u64
}

struct Checked {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = deeper::<A::Error>(self.depth)?;
        while seq.next_element_seed(Checked { depth })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let depth = deeper::<A::Error>(self.depth)?;
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                let shown = crate::error::quoted(&key);
                // The value is skipped first so that the position is just past the repeated entry.
                map.next_value::<IgnoredAny>()?;
                return Err(de::Error::custom(format!("the name {shown} is given twice in one object")));
            }
            map.next_value_seed(Checked { depth })?;
        }
        Ok(())
    }
}

fn deeper<E: de::Error>(depth: usize) -> Result<usize, E> {
    if depth >= MAX_DEPTH {
        return Err(E::custom(format!("nested more than {MAX_DEPTH} levels deep")));
    }
    Ok(depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_and_depth() {
        assert_eq!(check_json(br#"{"a": {"b": [1, 2]}, "c": null}"#), Ok(()));
        let (message, offset) = check_json(br#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(message.contains("\"a\" is given twice"), "{message}");
        // Byte 15 is the closing brace after the second value: the parser's position.
        assert_eq!(offset, 15);
        // Inner objects too.
        assert!(check_json(br#"{"x": {"k": 1, "k": 1}}"#).is_err());
        let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
        let (message, _) = check_json(deep.as_bytes()).unwrap_err();
        assert!(message.contains("nested more than 32 levels"), "{message}");
        assert!(check_json(b"{} trailing").is_err());
    }
}
