//! A tool's arguments checked against its JSON Schema before the plugin
//! sees them, for every engine's tools (pi does the same, and its
//! extensions rely on it). A call that fails is an error result naming the
//! fields, in pi's words: `Validation failed for tool "name"`.
//!
//! The schema is the plugin's and the arguments are the model's, so the
//! host's own check is bounded before the validator runs (the validator
//! has no budget of its own, and a `$ref`/`allOf` graph that fans out makes
//! it run for ever):
//! - *At load* ([`ArgumentCheck::refusal`]): the schema is expanded with
//!   its local references followed (a reference back to a schema on the
//!   way is recursion and counts once). More than [`MAX_EXPANDED`]
//!   subschemas, references nested over [`MAX_REF_DEPTH`] deep, a cycle of
//!   references that never moves into the arguments, or a reference the
//!   host cannot follow (anything but `#` and `#/pointer`, `$dynamicRef`,
//!   `$recursiveRef`, a reference inside an embedded `$id`) refuses the
//!   tool, naming it and what exceeded.
//! - *Per call*: before validating, the host walks the schema over the
//!   arguments as the validator would (every subschema that can apply to
//!   each value, over-counted), and a call that would take more than
//!   [`MAX_STEPS`] steps fails closed, naming the budget. The walk stops at
//!   the budget, so it is bounded too; the validator then does at most
//!   that work.

use jsonschema::Validator;
use serde_json::Value;
use std::rc::Rc;

/// The most problems one error result lists.
const MAX_PROBLEMS: usize = 20;

/// The most subschemas a tool's schema may expand to, its references
/// followed.
pub const MAX_EXPANDED: usize = 10_000;

/// The most references nested inside each other on one path of a schema.
pub const MAX_REF_DEPTH: usize = 32;

/// The most (subschema, value) steps checking one call's arguments may take.
pub const MAX_STEPS: usize = 1_000_000;

/// A tool's parameters schema, compiled once per run's tool.
pub(crate) struct ArgumentCheck {
    tool: String,
    schema: Value,
    validator: Result<Validator, String>,
    refusal: Option<String>,
}

impl ArgumentCheck {
    /// The check for `tool` with `schema`. A schema over the budget is not
    /// compiled (see [`refusal`](Self::refusal)); a schema that does not
    /// compile fails every call (closed), saying so.
    pub(crate) fn new(tool: &str, schema: &Value) -> Self {
        let refusal = over_budget(schema).err();
        let validator = match &refusal {
            Some(why) => Err(why.clone()),
            None => jsonschema::validator_for(schema).map_err(|e| e.to_string()),
        };
        Self {
            tool: tool.to_string(),
            schema: schema.clone(),
            validator,
            refusal: refusal
                .map(|why| format!("tool \"{tool}\" is refused: its parameters schema {why}")),
        }
    }

    /// Why the tool is refused at load, naming it and what exceeded the
    /// budget, if its schema is over it.
    pub(crate) fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// `Ok` when `args` match the schema; otherwise the error text the
    /// model reads, one line per problem, each naming its field.
    pub(crate) fn check(&self, args: &Value) -> Result<(), String> {
        let validator = self.validator.as_ref().map_err(|why| {
            format!(
                "Validation failed for tool \"{}\": its parameters schema is invalid: {why}",
                self.tool
            )
        })?;
        if steps(&self.schema, args, MAX_STEPS).is_none() {
            return Err(format!(
                "Validation failed for tool \"{}\": checking these arguments against its schema would take over {MAX_STEPS} steps (the host's budget); the plugin was not called",
                self.tool
            ));
        }
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
#[cfg(feature = "js")]
pub(crate) fn check_once(tool: &str, schema: &Value, args: &Value) -> Result<(), String> {
    let check = ArgumentCheck::new(tool, schema);
    if let Some(why) = check.refusal() {
        return Err(format!("Validation failed for tool \"{tool}\": {why}"));
    }
    check.check(args)
}

/// Keywords whose value is one subschema applied to the same value.
const IN_PLACE: &[&str] = &["not", "if", "then", "else"];
/// Keywords whose value is a list of subschemas applied to the same value.
const IN_PLACE_LISTS: &[&str] = &["allOf", "anyOf", "oneOf"];
/// Keywords whose value maps names to subschemas applied to the same value.
const IN_PLACE_MAPS: &[&str] = &["dependentSchemas", "dependencies"];
/// Keywords whose value maps names to subschemas of an object's members.
const MEMBER_MAPS: &[&str] = &["properties", "patternProperties"];
/// Keywords whose subschema applies to members or items.
const CHILD: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
];
/// Keywords whose value maps names to subschemas that apply only where
/// referenced (walked for the references they hold, expanded through them).
const DEFINITIONS: &[&str] = &["$defs", "definitions"];

/// The references a schema object holds that the host cannot follow.
const UNFOLLOWED: &[&str] = &["$dynamicRef", "$recursiveRef"];

/// The subschemas of `schema` with whether each moves into the value's
/// members or items.
fn children(schema: &serde_json::Map<String, Value>) -> Vec<(&Value, bool)> {
    let mut out = Vec::new();
    for (key, value) in schema {
        let key = key.as_str();
        if IN_PLACE.contains(&key) {
            out.push((value, false));
        } else if IN_PLACE_LISTS.contains(&key) {
            out.extend(value.as_array().into_iter().flatten().map(|v| (v, false)));
        } else if IN_PLACE_MAPS.contains(&key) {
            out.extend(
                value
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.values())
                    .filter(|v| v.is_object() || v.is_boolean())
                    .map(|v| (v, false)),
            );
        } else if MEMBER_MAPS.contains(&key) {
            out.extend(
                value
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.values())
                    .map(|v| (v, true)),
            );
        } else if CHILD.contains(&key) || key == "prefixItems" {
            match value {
                Value::Array(items) => out.extend(items.iter().map(|v| (v, true))),
                v => out.push((v, true)),
            }
        }
    }
    out
}

/// The subschema a `$ref` names, if the host can follow it.
fn target<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let pointer = reference
        .strip_prefix('#')
        .filter(|p| p.is_empty() || p.starts_with('/'))
        .ok_or_else(|| {
            format!("holds the reference \"{reference}\", which the host cannot follow (only \"#\" and \"#/pointer\")")
        })?;
    root.pointer(pointer)
        .ok_or_else(|| format!("holds the reference \"{reference}\", which names nothing"))
}

/// References followed on the way to a subschema: the target, and how many
/// moves into members or items had been made when it was followed.
struct Followed {
    target: *const Value,
    moves: usize,
    depth: usize,
    up: Option<Rc<Followed>>,
}

/// `Ok` when `schema`, expanded through its references, stays within
/// [`MAX_EXPANDED`] subschemas and [`MAX_REF_DEPTH`] nested references, and
/// every reference can be followed; otherwise what exceeded, in words that
/// follow "its parameters schema".
fn over_budget(schema: &Value) -> Result<(), String> {
    // The definitions and embedded resources are walked for what the host
    // cannot follow; the expansion below counts what applies.
    let mut plain: Vec<(&Value, bool)> = vec![(schema, false)];
    while let Some((node, embedded)) = plain.pop() {
        let Some(object) = node.as_object() else {
            continue;
        };
        let embedded = embedded || (!std::ptr::eq(node, schema) && object.contains_key("$id"));
        for key in UNFOLLOWED {
            if object.contains_key(*key) {
                return Err(format!("uses {key}, which the host cannot follow"));
            }
        }
        if let Some(reference) = object.get("$ref") {
            let reference = reference.as_str().unwrap_or_default();
            if embedded {
                return Err(format!(
                    "holds the reference \"{reference}\" inside an embedded resource ($id), which the host cannot follow"
                ));
            }
            target(schema, reference)?;
        }
        plain.extend(children(object).into_iter().map(|(v, _)| (v, embedded)));
        for key in DEFINITIONS {
            plain.extend(
                object
                    .get(*key)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(|m| m.values())
                    .map(|v| (v, embedded)),
            );
        }
    }
    let mut count = 0usize;
    let mut work: Vec<(&Value, usize, Option<Rc<Followed>>)> = vec![(schema, 0, None)];
    while let Some((node, moves, followed)) = work.pop() {
        count += 1;
        if count > MAX_EXPANDED {
            return Err(format!(
                "expands to over {MAX_EXPANDED} subschemas through its references ($ref, allOf, ...): the host's budget"
            ));
        }
        let Some(object) = node.as_object() else {
            continue;
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let to = target(schema, reference)?;
            let mut on_path = followed.as_deref();
            let mut recursion = false;
            while let Some(link) = on_path {
                if std::ptr::eq(link.target, to) {
                    if link.moves == moves {
                        return Err(format!(
                            "holds a cycle of references through \"{reference}\" that never moves into the arguments"
                        ));
                    }
                    recursion = true;
                    break;
                }
                on_path = link.up.as_deref();
            }
            if !recursion {
                let depth = followed.as_ref().map_or(0, |f| f.depth) + 1;
                if depth > MAX_REF_DEPTH {
                    return Err(format!(
                        "nests references over {MAX_REF_DEPTH} deep: the host's budget"
                    ));
                }
                let link = Rc::new(Followed {
                    target: to,
                    moves,
                    depth,
                    up: followed.clone(),
                });
                work.push((to, moves, Some(link)));
            }
        }
        for (child, moved) in children(object) {
            work.push((child, moves + usize::from(moved), followed.clone()));
        }
    }
    Ok(())
}

/// How many (subschema, value) steps checking `args` against `schema` may
/// take, counting every subschema that can apply to each value, or `None`
/// past `budget`. Every step waiting counts already, so neither the time
/// nor the memory of the walk goes past the budget.
fn steps(schema: &Value, args: &Value, budget: usize) -> Option<usize> {
    let mut count = 0usize;
    let mut work: Vec<(&Value, &Value)> = vec![(schema, args)];
    // Queue `subs` × `values`, unless that goes past the budget.
    fn queue<'a>(
        work: &mut Vec<(&'a Value, &'a Value)>,
        count: usize,
        budget: usize,
        subs: &[&'a Value],
        values: &[&'a Value],
    ) -> Option<()> {
        let more = subs.len().checked_mul(values.len())?;
        if count.checked_add(work.len())?.checked_add(more)? > budget {
            return None;
        }
        for s in subs {
            work.extend(values.iter().map(|v| (*s, *v)));
        }
        Some(())
    }
    while let Some((node, value)) = work.pop() {
        count += 1;
        if count > budget {
            return None;
        }
        let Some(object) = node.as_object() else {
            continue;
        };
        if let Some(to) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| target(schema, r).ok())
        {
            queue(&mut work, count, budget, &[to], &[value])?;
        }
        for (key, sub) in object {
            let key = key.as_str();
            let in_place = IN_PLACE.contains(&key)
                || IN_PLACE_LISTS.contains(&key)
                || IN_PLACE_MAPS.contains(&key);
            let inside = MEMBER_MAPS.contains(&key) || CHILD.contains(&key) || key == "prefixItems";
            if !in_place && !inside {
                continue;
            }
            let subs: Vec<&Value> = match sub {
                Value::Array(list) => list.iter().collect(),
                Value::Object(map)
                    if IN_PLACE_MAPS.contains(&key) || MEMBER_MAPS.contains(&key) =>
                {
                    map.values().collect()
                }
                s => vec![s],
            };
            if subs.is_empty() {
                continue;
            }
            // Collected only to be queued (or to end the walk): the time it
            // takes counts against the budget too.
            let values: Vec<&Value> = if in_place {
                vec![value]
            } else {
                // Over-counted: every member or item against every entry.
                match value {
                    Value::Object(members) if key == "propertyNames" => {
                        // A name is a string: one step each.
                        count = count.checked_add(members.len().checked_mul(subs.len())?)?;
                        Vec::new()
                    }
                    Value::Object(members) => members.values().collect(),
                    Value::Array(items) => items.iter().collect(),
                    _ => Vec::new(),
                }
            };
            queue(&mut work, count, budget, &subs, &values)?;
        }
    }
    Some(count)
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

    /// `depth` levels of `$defs`, each referring to the next one twice.
    fn fan_out(depth: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..depth {
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": format!("#/$defs/d{}", i + 1)}, {"$ref": format!("#/$defs/d{}", i + 1)}]}),
            );
        }
        defs.insert(format!("d{depth}"), json!({"type": "object"}));
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    }

    #[test]
    fn a_schema_whose_references_fan_out_is_refused_naming_the_tool_and_the_budget() {
        let started = std::time::Instant::now();
        let check = ArgumentCheck::new("fanout", &fan_out(40));
        let why = check.refusal().expect("refused");
        assert!(why.contains("tool \"fanout\""), "{why}");
        assert!(why.contains("the host's budget"), "{why}");
        let why = ArgumentCheck::new("wide", &fan_out(20))
            .refusal()
            .unwrap()
            .to_string();
        assert!(why.contains("expands to over 10000 subschemas"), "{why}");
        let call = check.check(&json!({})).unwrap_err();
        assert!(
            call.contains("Validation failed for tool \"fanout\""),
            "{call}"
        );
        // The budget is steps, asserted above; the clock only catches a
        // blow-up, generously, so a busy machine does not fail it.
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        // A few levels are fine.
        assert!(ArgumentCheck::new("small", &fan_out(5)).refusal().is_none());
    }

    #[test]
    fn references_the_host_cannot_follow_or_that_never_descend_are_refused() {
        for (schema, words) in [
            (
                json!({"$ref": "https://example.com/s.json"}),
                "cannot follow",
            ),
            (json!({"$dynamicRef": "#meta"}), "$dynamicRef"),
            (
                json!({"allOf": [{"$ref": "#"}]}),
                "never moves into the arguments",
            ),
            (json!({"$ref": "#/$defs/none"}), "names nothing"),
        ] {
            let why = ArgumentCheck::new("t", &schema)
                .refusal()
                .map(str::to_string);
            assert!(
                why.as_deref().is_some_and(|w| w.contains(words)),
                "{schema}: {why:?}"
            );
        }
        // Recursion through members is a tree, not a cycle.
        let tree = json!({"type": "object", "properties": {"left": {"$ref": "#"}, "right": {"$ref": "#"}}});
        let check = ArgumentCheck::new("tree", &tree);
        assert!(check.refusal().is_none());
        assert_eq!(check.check(&json!({"left": {"right": {}}})), Ok(()));
    }

    #[test]
    fn a_recursive_schema_that_fans_out_over_deep_arguments_fails_the_call_within_budget() {
        // Each level of the arguments is checked 16 times per check of the
        // level above.
        let mut node = json!({"properties": {"a": {"$ref": "#"}}});
        for _ in 0..4 {
            node = json!({"allOf": [node.clone(), node]});
        }
        let check = ArgumentCheck::new("deep", &node);
        assert!(check.refusal().is_none(), "{:?}", check.refusal());
        let mut args = json!({});
        for _ in 0..60 {
            args = json!({ "a": args });
        }
        let started = std::time::Instant::now();
        let why = check.check(&args).unwrap_err();
        assert!(why.contains("would take over 1000000 steps"), "{why}");
        // The step budget is the guarantee; the clock only catches a
        // blow-up, generously.
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        assert_eq!(check.check(&json!({"a": {"a": {}}})), Ok(()));
    }

    #[test]
    fn an_invalid_schema_fails_every_call_closed() {
        let check = ArgumentCheck::new("broken", &json!({"type": 12}));
        let why = check.check(&json!({})).unwrap_err();
        assert!(why.contains("its parameters schema is invalid"), "{why}");
    }
}
