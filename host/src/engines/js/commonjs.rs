//! CommonJS files (npm packages with `main`, `.cjs`) and JSON files,
//! through an interop wrapper.
//!
//! A CommonJS file `F` becomes two ES modules:
//! - its *definition* (`F?commonjs`): it imports the definitions of the
//!   CommonJS files `F` requires and the namespaces of the ES modules it
//!   requires, then registers `F`'s source with the host's CommonJS runtime
//!   ([`RUNTIME`]), which runs it on its first `require`, in sloppy mode,
//!   with `exports`, `require`, `module`, `__filename` and `__dirname`, as
//!   Node does (cycles see a partly filled `module.exports`);
//! - its *facade* (`F`), what ES modules import: `module.exports` as the
//!   default export, and as named exports the names a static look finds
//!   (`exports.x =`, `module.exports.x =`, `module.exports = { x }`,
//!   `Object.defineProperty(exports, "x", ...)`), as Node's lexer does.
//!
//! Every `require("literal")` is resolved when the plugin loads, so the
//! import graph is still checked before any code runs. A `require` of a
//! package that is not installed fails when it runs, naming the package, as
//! in Node (packages often `require` optional dependencies inside `try`).

use super::guard::{guarded, located};
use oxc::allocator::Allocator;
use oxc::ast::ast::{
    Argument, AssignmentExpression, AssignmentTarget, CallExpression, Expression,
    ObjectPropertyKind, StaticMemberExpression,
};
use oxc::ast_visit::{walk, Visit};
use oxc::parser::Parser;
use oxc::span::SourceType;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// The name of the host's CommonJS runtime module.
pub const RUNTIME: &str = "yohost:commonjs";

/// The runtime's source.
pub const RUNTIME_SOURCE: &str = include_str!("commonjs.js");

/// What a static look at a CommonJS source finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The specifiers of its `require("...")` calls, in order, once each.
    pub requires: Vec<String>,
    /// The names it exports, as Node's CommonJS lexer would find them.
    pub exports: BTreeSet<String>,
}

/// Parse CommonJS `source` (named `file` in messages) as a script and list
/// what it requires and exports. A syntax error names the file and line; a
/// source too large or nested too deep is refused before it is parsed, as
/// every plugin source is ([`guarded`]).
pub fn analyze(file: &Path, source: &str) -> Result<Analysis, String> {
    guarded(file, source, || analyze_here(file, source)).map_err(|e| e.message)?
}

/// [`analyze`], on the calling thread.
fn analyze_here(file: &Path, source: &str) -> Result<Analysis, String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::cjs()).parse();
    if let Some(error) = parsed.diagnostics.first() {
        return Err(located(file, source, error).message);
    }
    let mut found = Finder::default();
    found.visit_program(&parsed.program);
    found.analysis.exports.remove("default");
    Ok(found.analysis)
}

#[derive(Default)]
struct Finder {
    analysis: Analysis,
}

/// `exports` or `module.exports`.
fn is_exports(expression: &Expression) -> bool {
    match expression {
        Expression::Identifier(id) => id.name == "exports",
        Expression::StaticMemberExpression(member) => is_module_exports(member),
        _ => false,
    }
}

fn is_module_exports(member: &StaticMemberExpression) -> bool {
    matches!(&member.object, Expression::Identifier(id) if id.name == "module")
        && member.property.name == "exports"
}

impl<'a> Visit<'a> for Finder {
    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        let first_string = || match call.arguments.first() {
            Some(Argument::StringLiteral(s)) => Some(s.value.to_string()),
            _ => None,
        };
        match &call.callee {
            Expression::Identifier(id) if id.name == "require" && call.arguments.len() == 1 => {
                if let Some(specifier) = first_string() {
                    if !self.analysis.requires.contains(&specifier) {
                        self.analysis.requires.push(specifier);
                    }
                }
            }
            Expression::StaticMemberExpression(member)
                if member.property.name == "defineProperty"
                    && matches!(&member.object, Expression::Identifier(o) if o.name == "Object") =>
            {
                let target = call.arguments.first().and_then(|a| a.as_expression());
                if let (Some(target), Some(Argument::StringLiteral(name))) =
                    (target, call.arguments.get(1))
                {
                    if is_exports(target) {
                        self.analysis.exports.insert(name.value.to_string());
                    }
                }
            }
            _ => {}
        }
        walk::walk_call_expression(self, call);
    }

    fn visit_assignment_expression(&mut self, assignment: &AssignmentExpression<'a>) {
        if let AssignmentTarget::StaticMemberExpression(member) = &assignment.left {
            if is_module_exports(member) {
                if let Expression::ObjectExpression(object) = &assignment.right {
                    for property in &object.properties {
                        if let ObjectPropertyKind::ObjectProperty(p) = property {
                            if let Some(name) = p.key.static_name() {
                                self.analysis.exports.insert(name.to_string());
                            }
                        }
                    }
                }
            } else if is_exports(&member.object) {
                self.analysis
                    .exports
                    .insert(member.property.name.to_string());
            }
        }
        walk::walk_assignment_expression(self, assignment);
    }
}

/// The name of the definition module of the CommonJS or JSON file whose
/// module name is `name`.
pub fn definition_name(name: &str) -> String {
    format!("{name}?commonjs")
}

/// What one `require` specifier of a CommonJS file gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Required {
    /// Another CommonJS (or JSON) file, by module name.
    CommonJs(String),
    /// An ES module (a plugin file or a built-in), by module name: `require`
    /// gives its namespace.
    Module(String),
    /// Nothing: `require` throws this message, with code `MODULE_NOT_FOUND`.
    Missing(String),
}

/// The definition module of CommonJS file `name`, whose `require`
/// specifiers give `requires`. Returns its source and the module names it
/// imports.
pub fn definition(
    name: &str,
    source: &str,
    requires: &[(String, Required)],
) -> (String, Vec<String>) {
    let mut imports = vec![RUNTIME.to_string()];
    let mut code = format!("import {{ define }} from {};\n", quote(RUNTIME));
    let mut table = Map::new();
    let mut namespaces = Vec::new();
    for (specifier, required) in requires {
        let entry = match required {
            Required::CommonJs(target) => {
                let definition = definition_name(target);
                code.push_str(&format!("import {};\n", quote(&definition)));
                imports.push(definition);
                json!({ "commonjs": target })
            }
            Required::Module(target) => {
                let index = namespaces.len();
                code.push_str(&format!(
                    "import * as __ns{index} from {};\n",
                    quote(target)
                ));
                imports.push(target.clone());
                namespaces.push((specifier.clone(), index));
                json!({ "module": index })
            }
            Required::Missing(message) => json!({ "missing": message }),
        };
        table.insert(specifier.clone(), entry);
    }
    let list: Vec<String> = (0..namespaces.len()).map(|i| format!("__ns{i}")).collect();
    let body = source.strip_prefix("#!").map_or(source, |rest| {
        // Keep line numbers: drop the hashbang's text, not its line.
        rest.find('\n').map_or("", |at| &rest[at..])
    });
    code.push_str(&format!(
        "define({}, {}, [{}], {});\n",
        quote(name),
        Value::Object(table),
        list.join(", "),
        quote(body)
    ));
    (code, imports)
}

/// The definition module of JSON file `name`: `require` gives the parsed
/// value.
pub fn json_definition(name: &str, text: &str) -> String {
    format!(
        "import {{ defineJson }} from {};\ndefineJson({}, {});\n",
        quote(RUNTIME),
        quote(name),
        quote(text)
    )
}

/// The facade ES modules import for CommonJS (or JSON) file `name`.
pub fn facade(name: &str, exports: &BTreeSet<String>) -> String {
    let mut code = format!(
        "import {};\nimport {{ load }} from {};\nconst __exports = load({});\nexport default __exports;\n",
        quote(&definition_name(name)),
        quote(RUNTIME),
        quote(name)
    );
    for export in exports {
        if oxc::syntax::identifier::is_identifier_name(export)
            && !oxc::syntax::keyword::is_reserved_keyword(export)
            && !matches!(
                export.as_str(),
                "__exports"
                    | "load"
                    | "await"
                    | "yield"
                    | "let"
                    | "static"
                    | "enum"
                    | "implements"
                    | "interface"
                    | "package"
                    | "private"
                    | "protected"
                    | "public"
                    | "arguments"
                    | "eval"
            )
        {
            code.push_str(&format!(
                "export const {export} = __exports == null ? undefined : __exports[{}];\n",
                quote(export)
            ));
        }
    }
    code
}

/// A JavaScript string literal for `text`.
fn quote(text: &str) -> String {
    Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_and_exports_are_found_statically() {
        let found = analyze(
            Path::new("a.js"),
            r#"
            "use strict";
            const ms = require("ms"); const again = require("ms");
            const dynamic = require(name);
            exports.one = 1;
            module.exports.two = 2;
            Object.defineProperty(exports, "three", { value: 3 });
            if (x) module.exports = { four, "five": 5, six() {} };
            exports.default = 7;
            "#,
        )
        .unwrap();
        assert_eq!(found.requires, ["ms"]);
        let names: Vec<&str> = found.exports.iter().map(String::as_str).collect();
        assert_eq!(names, ["five", "four", "one", "six", "three", "two"]);
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line() {
        let err = analyze(Path::new("bad.js"), "var a = 1;\nvar = 2;\n").unwrap_err();
        assert!(err.starts_with("bad.js:2:"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_naming_the_line_not_a_stack_overflow() {
        for open in ["(", "[", "{"] {
            let close = match open {
                "(" => ")",
                "[" => "]",
                _ => "}",
            };
            let deep = format!(
                "var a = 1;\nmodule.exports = {}0{};\n",
                open.repeat(10_000),
                close.repeat(10_000)
            );
            let err = analyze(Path::new("deep.cjs"), &deep).unwrap_err();
            assert!(
                err.starts_with("deep.cjs:2:") && err.contains("deeper than 1000"),
                "{err}"
            );
        }
    }

    #[test]
    fn sloppy_mode_code_is_accepted() {
        analyze(
            Path::new("old.js"),
            "with (Math) { x = max(1, 2); }\nvar o = 010;",
        )
        .unwrap();
    }

    #[test]
    fn facade_exports_only_names_that_can_be_bindings() {
        let names: BTreeSet<String> = ["ok", "class", "__exports", "not-an-id"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let code = facade("node_modules/x/index.js", &names);
        assert!(code.contains("export const ok ="), "{code}");
        assert!(!code.contains("export const class"), "{code}");
        assert!(!code.contains("export const __exports"), "{code}");
        assert!(!code.contains("not-an-id ="), "{code}");
    }
}
