//! TypeScript and JavaScript sources to plain ES modules, with `oxc`.
//!
//! Types are stripped and nothing else is lowered: QuickJS runs modern
//! JavaScript as it is. A syntax or type-strip error is a [`TranspileError`]
//! that names the file, the line and the column.
//!//!
//! Every parse of a plugin's source runs under [`guarded`]
//! (`super::guard`): its size and nesting are bounded and its stack fits
//! it.

use super::guard::{guarded, located, TranspileError};
use super::positions::LineMap;
use oxc::allocator::Allocator;
use oxc::ast::ast::{
    BindingIdentifier, BindingPattern, ComputedMemberExpression, Expression,
    ImportDeclarationSpecifier, Program, Statement, StaticMemberExpression, VariableDeclarator,
};
use oxc::ast_visit::{walk, Visit};
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::parser::Parser;
use oxc::semantic::{Scoping, SemanticBuilder};
use oxc::span::SourceType;
use oxc::syntax::module_record::{ExportExportName, ExportImportName, ImportImportName};
use oxc::syntax::symbol::SymbolId;
use oxc::transformer::{TransformOptions, Transformer};
use std::collections::HashSet;
use std::path::Path;

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
    /// The members it reads from the namespaces it imports (`import * as
    /// fs from "node:fs"`, then `fs.watch(…)` or `const { watch } = fs`):
    /// `(specifier, member)`. Reading a namespace's missing member is legal
    /// (it is `undefined`, and code may test for it), so these say what the
    /// module may use, not what it must have.
    pub members: Vec<(String, String)>,
    /// The relative files its dynamic `import("./x")`s name as a string
    /// literal: gathered when they are there, as a static import's are, and
    /// left to fail when the code runs when they are not (as in Node, where
    /// a `catch` may fall back to another file).
    pub dynamic: Vec<String>,
    /// Where the code's positions are in the source, for TypeScript (whose
    /// code is not the source); `None` for JavaScript, which runs as written.
    pub lines: Option<LineMap>,
}

/// Strip the types of `source` (named `file` in messages; its extension says
/// whether it is TypeScript) and list its imports, on a thread whose stack
/// fits the source (see [`guarded`]).
pub fn transpile(file: &Path, source: &str) -> Result<Transpiled, TranspileError> {
    guarded(file, source, || transpile_here(file, source))?
}

/// [`transpile`], on the calling thread.
fn transpile_here(file: &Path, source: &str) -> Result<Transpiled, TranspileError> {
    let source_type = SourceType::from_path(file)
        .unwrap_or_else(|_| SourceType::mjs())
        .with_module(true)
        .with_jsx(false);
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(error) = parsed.diagnostics.errors().next() {
        return Err(located(file, source, error));
    }
    let mut program = parsed.program;
    // Enum members are evaluated here: the transformer needs their values
    // to turn a TypeScript `enum` into JavaScript.
    let semantic = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .with_enum_eval(true)
        .build(&program);
    if let Some(error) = semantic.diagnostics.errors().next() {
        return Err(located(file, source, error));
    }
    let scoping = semantic.semantic.into_scoping();
    let (code, lines) = if source_type.is_typescript() {
        let options = TransformOptions::default();
        let stripped =
            Transformer::new(&allocator, file, &options).build_with_scoping(scoping, &mut program);
        if let Some(error) = stripped.diagnostics.errors().next() {
            return Err(located(file, source, error));
        }
        let options = CodegenOptions {
            source_map_path: Some(file.to_path_buf()),
            ..CodegenOptions::default()
        };
        let generated = Codegen::new().with_options(options).build(&program);
        let lines = generated.map.map(|map| {
            LineMap::new(map.get_tokens().map(|t| {
                (
                    t.get_dst_line(),
                    t.get_dst_col(),
                    t.get_src_line(),
                    t.get_src_col(),
                )
            }))
        });
        (generated.code, lines)
    } else {
        (source.to_string(), None)
    };
    let (imports, names, members, dynamic) = imports_of(&code);
    Ok(Transpiled {
        imports,
        names,
        members,
        dynamic,
        code,
        lines,
    })
}

/// [`transpile`], for the embedded engine: the module also gets a
/// `require` of its own when it calls one it does not declare
/// (`super::esm_require`; Node runs ES modules as Node does).
pub fn transpile_embedded(file: &Path, source: &str) -> Result<Transpiled, TranspileError> {
    guarded(file, source, || {
        let module = transpile_here(file, source)?;
        let code = super::esm_require::with_require(module.code);
        let (imports, names, members, dynamic) = imports_of(&code);
        Ok(Transpiled {
            code,
            imports,
            names,
            members,
            dynamic,
            lines: module.lines,
        })
    })?
}

/// A name a module takes from another: `(specifier, name)`.
type Taken = (String, String);

/// The specifiers of the static imports of plain JavaScript `code`, the
/// names taken from them, the members read from the namespaces imported
/// ([`Transpiled::members`]), and the files its dynamic imports name
/// ([`Transpiled::dynamic`]).
fn imports_of(code: &str) -> (Vec<String>, Vec<Taken>, Vec<Taken>, Vec<String>) {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
    let members = namespace_members(&parsed.program);
    let dynamic = dynamic_imports_of(&parsed.module_record, code);
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
    let imports = found.into_iter().map(|(_, s)| s).collect();
    (imports, names, members, dynamic)
}

/// The relative specifiers of `code`'s dynamic imports that are string
/// literals ([`Transpiled::dynamic`]), each once.
fn dynamic_imports_of(
    record: &oxc::syntax::module_record::ModuleRecord<'_>,
    code: &str,
) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for dynamic in &record.dynamic_imports {
        let text = dynamic.module_request.source_text(code);
        let literal = serde_json::from_str::<String>(text).ok().or_else(|| {
            let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
            (!inner.contains(['\'', '"', '\\'])).then(|| inner.to_string())
        });
        if let Some(specifier) = literal.filter(|s| s.starts_with("./") || s.starts_with("../")) {
            if !found.contains(&specifier) {
                found.push(specifier);
            }
        }
    }
    found
}

/// The members `program` reads from the namespaces it imports, each once,
/// in order: `ns.member`, `ns["member"]` and `const { member } = ns`, where
/// `ns` is the import's own binding (a local of the same name is not).
fn namespace_members(program: &Program<'_>) -> Vec<Taken> {
    let namespaces: Vec<(&BindingIdentifier, String)> = program
        .body
        .iter()
        .filter_map(|statement| match statement {
            Statement::ImportDeclaration(import) => Some(import),
            _ => None,
        })
        .flat_map(|import| {
            import.specifiers.iter().flatten().filter_map(|s| match s {
                ImportDeclarationSpecifier::ImportNamespaceSpecifier(ns) => {
                    Some((&ns.local, import.source.value.to_string()))
                }
                _ => None,
            })
        })
        .collect();
    if namespaces.is_empty() {
        return Vec::new();
    }
    let scoping = SemanticBuilder::new()
        .build(program)
        .semantic
        .into_scoping();
    let mut reads = NamespaceReads {
        namespaces: namespaces
            .into_iter()
            .map(|(local, specifier)| (local.symbol_id(), specifier))
            .collect(),
        scoping: &scoping,
        seen: HashSet::new(),
        found: Vec::new(),
    };
    reads.visit_program(program);
    reads.found
}

/// The visitor of [`namespace_members`].
struct NamespaceReads<'s> {
    /// Each namespace import's binding, and its specifier.
    namespaces: Vec<(SymbolId, String)>,
    scoping: &'s Scoping,
    /// What `found` holds, to keep each read once in linear time (a 1 MiB
    /// source can read 100,000 members).
    seen: HashSet<Taken>,
    found: Vec<Taken>,
}

impl NamespaceReads<'_> {
    /// The specifier of the namespace `expression` names, if it does.
    fn namespace(&self, expression: &Expression<'_>) -> Option<String> {
        let Expression::Identifier(id) = expression else {
            return None;
        };
        let symbol = self.scoping.get_reference(id.reference_id()).symbol_id()?;
        self.namespaces
            .iter()
            .find(|(s, _)| *s == symbol)
            .map(|(_, specifier)| specifier.clone())
    }

    fn read(&mut self, specifier: String, member: &str) {
        let read = (specifier, member.to_string());
        if self.seen.insert(read.clone()) {
            self.found.push(read);
        }
    }
}

impl<'a> Visit<'a> for NamespaceReads<'_> {
    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        if let Some(specifier) = self.namespace(&it.object) {
            self.read(specifier, &it.property.name);
        }
        walk::walk_static_member_expression(self, it);
    }

    fn visit_computed_member_expression(&mut self, it: &ComputedMemberExpression<'a>) {
        if let (Some(specifier), Expression::StringLiteral(key)) =
            (self.namespace(&it.object), &it.expression)
        {
            self.read(specifier, &key.value);
        }
        walk::walk_computed_member_expression(self, it);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if let (BindingPattern::ObjectPattern(pattern), Some(init)) = (&it.id, &it.init) {
            if let Some(specifier) = self.namespace(init) {
                for property in &pattern.properties {
                    if let Some(name) = property.key.static_name() {
                        self.read(specifier.clone(), &name);
                    }
                }
            }
        }
        walk::walk_variable_declarator(self, it);
    }
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

#[cfg(test)]
mod tests {
    use super::super::guard::MAX_SOURCE_BYTES;
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
    fn members_read_from_an_imported_namespace_are_listed_once() {
        let out = transpile(
            Path::new("p.ts"),
            r#"import * as fs from "node:fs";
import * as path from "node:path";
import { readFileSync } from "node:fs";
const { watch, statSync: stat } = fs;
export function f(p: string) {
  fs.existsSync(p);
  fs["createReadStream"](p);
  fs.existsSync(p);
  return path.join(p, "x") + readFileSync(p);
}
export function g(fs: { open(): void }) {
  fs.open();
}
"#,
        )
        .unwrap();
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(s, n)| (s.to_string(), n.to_string()))
                .collect()
        };
        assert_eq!(out.names, pairs(&[("node:fs", "readFileSync")]));
        assert_eq!(
            out.members,
            pairs(&[
                ("node:fs", "watch"),
                ("node:fs", "statSync"),
                ("node:fs", "existsSync"),
                ("node:fs", "createReadStream"),
                ("node:path", "join"),
            ]),
            "a parameter named like the namespace is not it"
        );
    }

    #[test]
    fn a_syntax_error_names_the_file_line_and_column() {
        let err = transpile(Path::new("bad.ts"), "const a = 1;\nconst b: = 2;\n").unwrap_err();
        assert!(err.message.starts_with("bad.ts:2:"), "{}", err.message);
    }

    #[test]
    fn a_deep_or_huge_source_is_refused_naming_the_file() {
        let deep = format!(
            "export const x = {}1{};",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let err = transpile(Path::new("deep.ts"), &deep).unwrap_err();
        assert!(
            err.message.starts_with("deep.ts:1:") && err.message.contains("deeper than 1000"),
            "{}",
            err.message
        );
        let huge = " ".repeat(MAX_SOURCE_BYTES as usize + 1);
        let err = transpile(Path::new("huge.js"), &huge).unwrap_err();
        assert!(err.message.contains("over the limit"), "{}", err.message);
    }

    #[test]
    fn nesting_the_scan_cannot_see_does_not_overflow_the_stack() {
        // A chain of arrow functions has no brackets; oxc recurses on it.
        let chain = format!("export const f = {}1;", "x => ".repeat(100_000));
        transpile(Path::new("chain.ts"), &chain).unwrap();
    }

    #[test]
    fn javascript_passes_through_unchanged() {
        let src = "export default { on_input() { return null } };\n";
        assert_eq!(transpile(Path::new("p.js"), src).unwrap().code, src);
    }
}
