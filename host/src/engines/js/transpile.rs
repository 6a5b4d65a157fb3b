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
use oxc::syntax::module_record::{ExportExportName, ExportImportName, ImportImportName};
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
    /// The names its static imports and re-exports take from each
    /// specifier: `(specifier, name)`, with `default` for a default import
    /// (namespace imports take no name).
    pub names: Vec<(String, String)>,
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
    let (imports, names) = imports_of(&code);
    Ok(Transpiled {
        imports,
        names,
        code,
    })
}

/// The specifiers of the static imports of plain JavaScript `code`, and
/// the names taken from them.
fn imports_of(code: &str) -> (Vec<String>, Vec<(String, String)>) {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
    let record = &parsed.module_record;
    let imported = record.import_entries.iter().filter_map(|e| {
        let name = match &e.import_name {
            ImportImportName::Name(n) => n.name.to_string(),
            ImportImportName::Default(_) => "default".to_string(),
            ImportImportName::NamespaceObject => return None,
        };
        Some((e.module_request.name.to_string(), name))
    });
    let reexported = record.indirect_export_entries.iter().filter_map(|e| {
        let ExportImportName::Name(n) = &e.import_name else {
            return None;
        };
        let request = e.module_request.as_ref()?;
        Some((request.name.to_string(), n.name.to_string()))
    });
    let names = imported.chain(reexported).collect();
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
    (found.into_iter().map(|(_, s)| s).collect(), names)
}

/// The names plain JavaScript module `code` exports (`default` for its
/// default export).
pub fn exports_of(code: &str) -> Vec<String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
    let record = &parsed.module_record;
    record
        .local_export_entries
        .iter()
        .chain(record.indirect_export_entries.iter())
        .filter_map(|e| match &e.export_name {
            ExportExportName::Name(n) => Some(n.name.to_string()),
            ExportExportName::Default(_) => Some("default".to_string()),
            ExportExportName::Null => None,
        })
        .collect()
}

/// `file:line:column: message` for the diagnostic's first label.
pub(super) fn located(file: &Path, source: &str, error: &OxcDiagnostic) -> TranspileError {
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
