//! A tool library's schemas: `{name, description, parameters}` per tool,
//! checked before the library is accepted.

use serde_json::{Map, Value};
use yohost::contract::ToolSpec;

/// The most tools one library may declare.
pub const MAX_TOOLS: u32 = 1024;

/// The longest schema of one tool, in bytes.
pub const MAX_SCHEMA_BYTES: usize = 1024 * 1024;

/// Why a library's schemas refuse it. Each names the tool by index (and by
/// name once it is known).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// `rutis_plugin_tool_count` returned an absurd number.
    #[error("declares {0} tools; at most {MAX_TOOLS} are accepted")]
    TooMany(u32),
    /// `rutis_plugin_tool_schema(i)` returned a null pointer.
    #[error("tool {0}: the schema is missing (a null pointer)")]
    Missing(u32),
    /// The schema has no NUL within [`MAX_SCHEMA_BYTES`].
    #[error("tool {0}: the schema is longer than {MAX_SCHEMA_BYTES} bytes")]
    TooLong(u32),
    /// The schema is not UTF-8.
    #[error("tool {0}: the schema is not UTF-8")]
    NotUtf8(u32),
    /// The schema is not JSON.
    #[error("tool {index}: the schema is not JSON: {message}")]
    NotJson {
        /// The tool's index.
        index: u32,
        /// The parser's message.
        message: String,
    },
    /// The schema is JSON but not an object.
    #[error("tool {0}: the schema is not a JSON object")]
    NotObject(u32),
    /// `name` is missing or not a string.
    #[error("tool {0}: the schema has no `name` string")]
    NoName(u32),
    /// `name` is not a name a model can call.
    #[error("tool {index}: `{name}` is not a tool name a model can call (1 to 64 of A-Z, a-z, 0-9, _ and -)")]
    BadName {
        /// The tool's index.
        index: u32,
        /// The name.
        name: String,
    },
    /// `description` is present and not a string.
    #[error("tool {index} ({name}): `description` is not a string")]
    BadDescription {
        /// The tool's index.
        index: u32,
        /// The tool's name.
        name: String,
    },
    /// `parameters` is present and not a JSON object.
    #[error(
        "tool {index} ({name}): `parameters` is not a JSON object (a JSON Schema of the arguments)"
    )]
    BadParameters {
        /// The tool's index.
        index: u32,
        /// The tool's name.
        name: String,
    },
    /// Two tools have the same name.
    #[error("tools {first} and {second} are both named `{name}`")]
    Duplicate {
        /// The first tool's index.
        first: u32,
        /// The second tool's index.
        second: u32,
        /// The name.
        name: String,
    },
}

/// Read tool `index`'s schema. `parameters` defaults to an empty object
/// schema and `description` to nothing.
pub fn parse_tool(index: u32, bytes: &[u8]) -> Result<ToolSpec, SchemaError> {
    let text = std::str::from_utf8(bytes).map_err(|_| SchemaError::NotUtf8(index))?;
    let value: Value = serde_json::from_str(text).map_err(|e| SchemaError::NotJson {
        index,
        message: e.to_string(),
    })?;
    let Value::Object(mut map) = value else {
        return Err(SchemaError::NotObject(index));
    };
    // Other keys are ignored, as rutis's loader ignores them.
    let name = match map.remove("name") {
        Some(Value::String(name)) => name,
        _ => return Err(SchemaError::NoName(index)),
    };
    if !callable(&name) {
        return Err(SchemaError::BadName { index, name });
    }
    let description = match map.remove("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(_) => return Err(SchemaError::BadDescription { index, name }),
    };
    let parameters = match map.remove("parameters") {
        None => Value::Object(Map::from_iter([
            ("type".to_string(), Value::from("object")),
            ("properties".to_string(), Value::Object(Map::new())),
        ])),
        Some(Value::Object(schema)) => Value::Object(schema),
        Some(_) => return Err(SchemaError::BadParameters { index, name }),
    };
    Ok(ToolSpec {
        name,
        description,
        parameters,
        label: None,
        prepares_arguments: false,
    })
}

/// Refuse two tools with the same name.
pub fn check_unique(tools: &[ToolSpec]) -> Result<(), SchemaError> {
    for (second, tool) in tools.iter().enumerate() {
        if let Some(first) = tools[..second].iter().position(|t| t.name == tool.name) {
            return Err(SchemaError::Duplicate {
                first: first as u32,
                second: second as u32,
                name: tool.name.clone(),
            });
        }
    }
    Ok(())
}

/// 1 to 64 of `A-Z a-z 0-9 _ -`: what the model providers accept.
fn callable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ToolSpec, SchemaError> {
        parse_tool(3, text.as_bytes())
    }

    #[test]
    fn a_schema_parses_with_defaults() {
        let tool =
            parse(r#"{"name":"word_count","description":"Count","parameters":{"type":"object"}}"#)
                .unwrap();
        assert_eq!(tool.name, "word_count");
        assert_eq!(tool.description, "Count");
        let bare = parse(r#"{"name":"x"}"#).unwrap();
        assert_eq!(bare.description, "");
        assert_eq!(bare.parameters["type"], "object");
    }

    #[test]
    fn every_malformed_schema_is_refused_with_its_reason() {
        assert_eq!(parse_tool(3, b"\xff{}"), Err(SchemaError::NotUtf8(3)));
        assert!(matches!(
            parse("{name"),
            Err(SchemaError::NotJson { index: 3, .. })
        ));
        assert_eq!(parse("[]"), Err(SchemaError::NotObject(3)));
        assert_eq!(parse(r#"{"description":"d"}"#), Err(SchemaError::NoName(3)));
        assert_eq!(parse(r#"{"name":7}"#), Err(SchemaError::NoName(3)));
        for bad in ["", "has space", "semi;colon", &"x".repeat(65)] {
            assert!(
                matches!(
                    parse(&format!(r#"{{"name":"{bad}"}}"#)),
                    Err(SchemaError::BadName { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            parse(r#"{"name":"x","description":1}"#),
            Err(SchemaError::BadDescription { .. })
        ));
        for params in ["[]", "\"object\"", "null", "true"] {
            assert!(
                matches!(
                    parse(&format!(r#"{{"name":"x","parameters":{params}}}"#)),
                    Err(SchemaError::BadParameters { .. })
                ),
                "{params}"
            );
        }
    }

    #[test]
    fn other_keys_are_ignored_as_rutis_ignores_them() {
        let tool = parse_tool(
            3,
            br#"{"name":"x","version":"1.2","paramters":{},"annotations":{"readOnly":true}}"#,
        )
        .unwrap();
        assert_eq!(tool.name, "x");
        assert_eq!(tool.parameters["type"], "object");
    }

    #[test]
    fn duplicate_names_are_refused_naming_both_indexes() {
        let tools: Vec<ToolSpec> = ["a", "b", "a"]
            .iter()
            .map(|n| parse(&format!(r#"{{"name":"{n}"}}"#)).unwrap())
            .collect();
        assert_eq!(
            check_unique(&tools),
            Err(SchemaError::Duplicate {
                first: 0,
                second: 2,
                name: "a".into()
            })
        );
        assert_eq!(check_unique(&tools[..2]), Ok(()));
    }
}
