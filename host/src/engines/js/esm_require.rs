//! `require("…")` inside an ES module, as pi's loader (jiti) allows it: a
//! module that calls `require` with a literal specifier, and has no
//! `require` of its own, gets one. Each literal specifier becomes a
//! namespace import appended to the module (imports are hoisted, so no line
//! of the module moves), and `require` a function declaration (hoisted with
//! its body) that asks the CommonJS runtime (`requireIn` in `commonjs.js`)
//! for the module's `default` where it has one (a CommonJS module's
//! `module.exports`, a Node built-in's object), else the namespace. A
//! specifier found only when the code runs cannot be served: its `require`
//! throws, naming it, as a CommonJS file's does.

use oxc::allocator::Allocator;
use oxc::ast::ast::{Argument, CallExpression, Expression};
use oxc::ast_visit::{walk, Visit};
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;

/// `code` (a plain ES module), with `require` for the literal specifiers it
/// requires when it calls a `require` it does not declare; as it is
/// otherwise.
pub(super) fn with_require(code: String) -> String {
    let specifiers = required(&code);
    if specifiers.is_empty() {
        return code;
    }
    // Glue only: what `require` does is the CommonJS runtime's.
    let runtime = serde_json::to_string(super::commonjs::RUNTIME).unwrap_or_default();
    let mut tail = format!("\n;import {{ requireIn as __yohost_require_in }} from {runtime};");
    let mut served = String::new();
    for (index, specifier) in specifiers.iter().enumerate() {
        let quoted = serde_json::to_string(specifier).unwrap_or_default();
        tail.push_str(&format!(
            "import * as __yohost_required_{index} from {quoted};"
        ));
        served.push_str(&format!("{quoted}: __yohost_required_{index}, "));
    }
    tail.push_str(&format!(
        "function require(specifier) {{ return __yohost_require_in(specifier, {{ {served}}}); }}\n"
    ));
    code + &tail
}

/// The literal specifiers of the calls of an undeclared `require` in
/// `code`, each once, in order; none when `code` declares `require` at its
/// top level or does not parse.
fn required(code: &str) -> Vec<String> {
    if !code.contains("require") {
        return Vec::new();
    }
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
    if parsed.diagnostics.errors().next().is_some() {
        return Vec::new();
    }
    let scoping = SemanticBuilder::new()
        .build(&parsed.program)
        .semantic
        .into_scoping();
    if !scoping.root_unresolved_references().contains_key("require") {
        return Vec::new();
    }
    let mut calls = Calls {
        scoping: &scoping,
        found: Vec::new(),
    };
    calls.visit_program(&parsed.program);
    calls.found
}

/// The visitor of [`required`].
struct Calls<'s> {
    scoping: &'s oxc::semantic::Scoping,
    found: Vec<String>,
}

impl<'a> Visit<'a> for Calls<'_> {
    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if let (Expression::Identifier(callee), [Argument::StringLiteral(specifier)]) =
            (&it.callee, it.arguments.as_slice())
        {
            let unresolved = self
                .scoping
                .get_reference(callee.reference_id())
                .symbol_id()
                .is_none();
            if callee.name == "require"
                && unresolved
                && !self.found.iter().any(|f| f == specifier.value.as_str())
            {
                self.found.push(specifier.value.to_string());
            }
        }
        walk::walk_call_expression(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undeclared_require_with_literals_gets_one_and_a_declared_one_is_left() {
        let code = "const path = require(\"node:path\");\nconst again = require('node:path');\nexport const x = require(\"./helper.js\").y;\n";
        let with = with_require(code.to_string());
        assert!(with.starts_with(code), "no line of the module moves");
        assert!(with.contains("import * as __yohost_required_0 from \"node:path\";"));
        assert!(with.contains("import * as __yohost_required_1 from \"./helper.js\";"));
        assert!(!with.contains("__yohost_required_2"), "each specifier once");
        assert!(with.contains("function require(specifier)"));
        assert!(
            with.contains("import { requireIn as __yohost_require_in } from \"yohost:commonjs\";")
        );
        let declared = "import { createRequire } from \"node:module\";\nconst require = createRequire(import.meta.url);\nrequire(\"x\");\n";
        assert_eq!(with_require(declared.to_string()), declared);
        let none = "export const y = 1; // require(\"x\") in a comment\n";
        assert_eq!(with_require(none.to_string()), none);
    }
}
