//! A tool's arguments checked against its JSON Schema before the plugin
//! sees them, for every engine's tools (pi does the same, and its
//! extensions rely on it). A call that fails is an error result naming the
//! fields, in pi's words: `Validation failed for tool "name"`.

use jsonschema::Validator;

/// The most problems one error result lists.
const MAX_PROBLEMS: usize = 20;

/// A tool's parameters schema, compiled once per run's tool.
pub(crate) struct ArgumentCheck {
    tool: String,
    validator: Result<Validator, String>,
}

impl ArgumentCheck {
    /// The check for `tool` with `schema`. A schema that does not compile
    /// fails every call (closed), saying so.
    pub(crate) fn new(tool: &str, schema: &serde_json::Value) -> Self {
        Self {
            tool: tool.to_string(),
            validator: jsonschema::validator_for(schema).map_err(|e| e.to_string()),
        }
    }

    /// `Ok` when `args` match the schema; otherwise the error text the
    /// model reads, one line per problem, each naming its field.
    pub(crate) fn check(&self, args: &serde_json::Value) -> Result<(), String> {
        let validator = self.validator.as_ref().map_err(|why| {
            format!(
                "Validation failed for tool \"{}\": its parameters schema is invalid: {why}",
                self.tool
            )
        })?;
        let problems: Vec<String> = validator
            .iter_errors(args)
            .take(MAX_PROBLEMS)
            .map(|error| {
                let path = error.instance_path().to_string();
                let field = path.trim_start_matches('/').replace('/', ".");
                let field = if field.is_empty() { "root" } else { &field };
                format!("  - {field}: {error}")
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        Err(format!(
            "Validation failed for tool \"{}\":\n{}\n\nReceived arguments:\n{}",
            self.tool,
            problems.join("\n"),
            serde_json::to_string_pretty(args).unwrap_or_default()
        ))
    }
}

/// Check `args` against `schema` for tool `tool` at once: the same verdict
/// and words as the host's own check, for a plugin that prepares its
/// arguments before checking them (the JS engine's `validate` service).
pub(crate) fn check_once(
    tool: &str,
    schema: &serde_json::Value,
    args: &serde_json::Value,
) -> Result<(), String> {
    ArgumentCheck::new(tool, schema).check(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hello() -> ArgumentCheck {
        ArgumentCheck::new(
            "hello",
            &json!({"type": "object", "properties": {"name": {"type": "string"}, "times": {"type": "integer"}}, "required": ["name"]}),
        )
    }

    #[test]
    fn matching_arguments_pass() {
        assert_eq!(hello().check(&json!({"name": "Ada", "times": 2})), Ok(()));
    }

    #[test]
    fn failures_name_every_field() {
        let why = hello().check(&json!({"times": "two"})).unwrap_err();
        assert!(
            why.starts_with("Validation failed for tool \"hello\":"),
            "{why}"
        );
        assert!(
            why.contains("  - root: ") && why.contains("\"name\""),
            "{why}"
        );
        assert!(why.contains("  - times: "), "{why}");
    }

    #[test]
    fn an_invalid_schema_fails_every_call_closed() {
        let check = ArgumentCheck::new("broken", &json!({"type": 12}));
        let why = check.check(&json!({})).unwrap_err();
        assert!(why.contains("its parameters schema is invalid"), "{why}");
    }
}
