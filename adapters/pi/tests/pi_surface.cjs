// The published surface of one pi line, read from its `.d.ts` files with
// TypeScript: the value exports of the packages an extension may import,
// the members of `ExtensionAPI`, `ExtensionContext` and its `ui`,
// `sessionManager` and `modelRegistry`, and the event names `pi.on` takes.
// node pi_surface.cjs <typescript> <node_modules> <scope>
const ts = require(process.argv[2]);
const root = process.argv[3], scope = process.argv[4];
const pkgs = ["pi-coding-agent", "pi-ai", "pi-tui", "pi-agent-core"];
const files = pkgs.map((p) => `${root}/${scope}/${p}/dist/index.d.ts`);
const program = ts.createProgram(files, { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true });
const checker = program.getTypeChecker();
const out = { exports: {}, members: {} };
pkgs.forEach((p, i) => {
  const sf = program.getSourceFile(files[i]);
  const sym = checker.getSymbolAtLocation(sf);
  out.exports[p] = checker.getExportsOfModule(sym).map((s) => {
    const t = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const value = (t.flags & ts.SymbolFlags.Value) !== 0;
    return value ? s.name : null;
  }).filter(Boolean).sort();
});
const ca = program.getSourceFile(files[0]);
const caSym = checker.getSymbolAtLocation(ca);
const byName = Object.fromEntries(checker.getExportsOfModule(caSym).map((s) => [s.name, s]));
function membersOf(type) { return checker.getPropertiesOfType(checker.getApparentType(type)).map((p) => p.name).sort(); }
function declared(name) { const s = checker.getAliasedSymbol(byName[name]); return checker.getDeclaredTypeOfSymbol(s); }
const api = declared("ExtensionAPI"), ctx = declared("ExtensionContext");
out.members["pi"] = membersOf(api);
out.members["ctx"] = membersOf(ctx);
for (const k of ["ui", "sessionManager", "modelRegistry"]) {
  const prop = checker.getPropertyOfType(ctx, k);
  out.members[`ctx.${k}`] = membersOf(checker.getTypeOfSymbol(prop));
}
// the event names: the first parameter of every `on` overload
const on = checker.getPropertyOfType(api, "on");
const events = new Set();
for (const sig of checker.getTypeOfSymbol(on).getCallSignatures()) {
  const t = checker.getTypeOfSymbol(sig.parameters[0]);
  for (const u of t.isUnion() ? t.types : [t]) if (u.isStringLiteral()) events.add(u.value);
}
out.events = [...events].sort();
console.log(JSON.stringify(out, null, 1));
