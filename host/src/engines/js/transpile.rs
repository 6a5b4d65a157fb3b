//! TypeScript and JavaScript sources to plain ES modules, with `oxc`.
//!
//! Types are stripped and nothing else is lowered: QuickJS runs modern
//! JavaScript as it is. A syntax or type-strip error is a [`TranspileError`]
//! that names the file, the line and the column.

use oxc::allocator::Allocator;
use oxc::codegen::Codegen;
use oxc::diagnostics::OxcDiagnostic;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};
use std::path::Path;

/// Why a source could not be turned into JavaScript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranspileError {
    /// `file:line:column: message`, for the first error found.
    pub message: String,
}

/// A module ready for the engine: its JavaScript and what it imports.
#[derive(Debug, Clone)]
pub struct Transpiled {
    /// The module's JavaScript.
    pub code: String,
    /// The specifiers its static imports and re-exports name, in order,
    /// after type-only imports were removed.
    pub imports: Vec<String>,
}

/// Strip the types of `source` (named `file` in messages; its extension says
/// whether it is TypeScript) and list its imports.
pub fn transpile(file: &Path, source: &str) -> Result<Transpiled, TranspileError> {
    let source_type = SourceType::from_path(file)
        .unwrap_or_else(|_| SourceType::mjs())
        .with_module(true);
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(error) = parsed.diagnostics.errors().next() {
        return Err(located(file, source, error));
    }
    let mut program = parsed.program;
    let semantic = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .build(&program);
    if let Some(error) = semantic.diagnostics.errors().next() {
        return Err(located(file, source, error));
    }
    let scoping = semantic.semantic.into_scoping();
    let code = if source_type.is_typescript() {
        let options = TransformOptions::default();
        let stripped =
            Transformer::new(&allocator, file, &options).build_with_scoping(scoping, &mut program);
        if let Some(error) = stripped.diagnostics.errors().next() {
            return Err(located(file, source, error));
        }
        Codegen::new().build(&program).code
    } else {
        source.to_string()
    };
    Ok(Transpiled {
        imports: imports_of(&code),
        code,
    })
}

/// The specifiers of the static imports of plain JavaScript `code`.
fn imports_of(code: &str) -> Vec<String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
    let mut found: Vec<(u32, String)> = parsed
        .module_record
        .requested_modules
        .iter()
        .flat_map(|(specifier, uses)| {
            uses.iter()
                .map(move |u| (u.span.start, specifier.to_string()))
        })
        .collect();
    found.sort();
    found.dedup_by(|a, b| a.1 == b.1);
    found.into_iter().map(|(_, s)| s).collect()
}

/// `file:line:column: message` for the diagnostic's first label.
fn located(file: &Path, source: &str, error: &OxcDiagnostic) -> TranspileError {
    let offset = error
        .labels
        .first()
        .map(|l| l.span().start as usize)
        .unwrap_or(0)
        .min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    TranspileError {
        message: format!("{}:{line}:{column}: {}", file.display(), error.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_stripped_and_type_only_imports_dropped() {
        let out = transpile(
            Path::new("p.ts"),
            "import type { Ctx } from \"yohost\";\nimport { definePlugin } from \"yohost\";\nimport { helper } from \"./util.ts\";\ninterface A { x: number }\nexport default definePlugin({ before_tool: (a: A, c: Ctx): null => helper(a) });\n",
        )
        .unwrap();
        assert!(!out.code.contains("interface"), "{}", out.code);
        assert_eq!(out.imports, ["yohost", "./util.ts"]);
    }

    #[test]
    fn a_syntax_error_names_the_file_line_and_column() {
        let err = transpile(Path::new("bad.ts"), "const a = 1;\nconst b: = 2;\n").unwrap_err();
        assert!(err.message.starts_with("bad.ts:2:"), "{}", err.message);
    }

    #[test]
    fn javascript_passes_through_unchanged() {
        let src = "export default { on_input() { return null } };\n";
        assert_eq!(transpile(Path::new("p.js"), src).unwrap().code, src);
    }
}
