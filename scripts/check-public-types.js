#!/usr/bin/env node
// Checks the declarations of the installed @malipo/nestjs from an app that uses it (run with the
// app as the working directory, with the app's own TypeScript and tsconfig.json):
// - every type the public API names is importable from one of the package's entry points, so an
//   app with `declaration: true` can emit the types it infers from our calls (TS2742 otherwise);
// - the package's .d.ts files type-check on their own (skipLibCheck off for them), so what the
//   build strips (`stripInternal`) leaves no reference behind.
// The parameters of our classes' constructors are not held to the first rule: an app gets our
// services from Nest's injector, which passes them the library's internals; the classes an app
// constructs itself (journals, stores, errors, requests) take options types that are exported.
// An optional peer the app has not installed (ioredis, bullmq) is one its code does not import.
// Usage: cd <app> && node <repo>/scripts/check-public-types.js
const fs = require('node:fs');
const path = require('node:path');

const app = process.cwd();
const ts = require(require.resolve('typescript', { paths: [app] }));
const packageDir = path.join(app, 'node_modules', '@malipo', 'nestjs');
const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const entries = Object.keys(manifest.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => `@malipo/nestjs${subpath.slice(1)}`);

const probeDir = fs.mkdtempSync(path.join(app, '.public-types-'));
const probe = path.join(probeDir, 'entries.ts');
fs.writeFileSync(
  probe,
  entries.map((entry, index) => `export * as entry${index} from '${entry}';\n`).join(''),
);

const configFile = ts.readConfigFile(path.join(app, 'tsconfig.json'), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, app);
const program = ts.createProgram([probe], {
  ...parsed.options,
  noEmit: true,
  incremental: false,
  skipLibCheck: false,
});
const checker = program.getTypeChecker();
// The package as installed, and as its symlink resolves (npm links a `file:` dependency).
const packageRoots = [packageDir, fs.realpathSync(packageDir)].map((dir) => dir + path.sep);
const ours = (fileName) => {
  const resolved = path.resolve(fileName);
  return packageRoots.some((root) => resolved.startsWith(root));
};

const optionalPeers = Object.keys(manifest.peerDependenciesMeta ?? {}).filter(
  (name) => manifest.peerDependenciesMeta[name].optional,
);
const installed = (name) => fs.existsSync(path.join(app, 'node_modules', name, 'package.json'));
const missingPeer = (diagnostic) =>
  diagnostic.code === 2307 &&
  optionalPeers.some(
    (name) =>
      !installed(name) &&
      ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ').includes(`'${name}'`),
  );

const problems = [];
for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
  if (diagnostic.file && !ours(diagnostic.file.fileName) && diagnostic.file.fileName !== probe) {
    continue;
  }
  if (missingPeer(diagnostic)) continue;
  const where = diagnostic.file
    ? `${path.relative(app, diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
    : '';
  problems.push(
    `${where} TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
  );
}

const resolve = (symbol) =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
const declaredInPackage = (symbol) =>
  (symbol.declarations ?? []).some((declaration) => ours(declaration.getSourceFile().fileName));

// What the entry points export, as symbols, with the names an app imports them by.
const exported = new Map();
const probeFile = program.getSourceFile(probe);
for (const namespace of checker.getExportsOfModule(checker.getSymbolAtLocation(probeFile))) {
  const entry = entries[Number(namespace.name.slice('entry'.length))];
  const moduleSymbol = resolve(namespace);
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    exported.set(resolve(symbol), `${entry}: ${symbol.name}`);
  }
}

const NAMED =
  ts.SymbolFlags.Class |
  ts.SymbolFlags.Interface |
  ts.SymbolFlags.Enum |
  ts.SymbolFlags.TypeAlias |
  ts.SymbolFlags.TypeParameter;
const hidden = (declaration) =>
  (ts.getCombinedModifierFlags(declaration) &
    (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !==
    0 ||
  (declaration.name !== undefined && ts.isPrivateIdentifier(declaration.name));
const unnameable = new Map();
const seen = new Set();

/** Walks `type` as a declaration file would spell it, noting each named type it cannot import. */
function walk(type, trail) {
  if (seen.has(type)) return;
  seen.add(type);
  const alias = type.aliasSymbol;
  if (alias) {
    // A name stops the walk, not its arguments: `Promise<Hidden>` spells `Hidden` too.
    note(alias, trail);
    for (const argument of type.aliasTypeArguments ?? []) walk(argument, `${trail}<>`);
    return;
  }
  if (type.isUnionOrIntersection()) {
    for (const member of type.types) walk(member, trail);
    return;
  }
  const symbol = type.getSymbol();
  if (symbol && symbol.flags & NAMED) {
    note(symbol, trail);
    if (ts.getObjectFlags(type) & ts.ObjectFlags.Reference) {
      for (const argument of checker.getTypeArguments(type)) walk(argument, `${trail}<>`);
    }
    return;
  }
  if (type.flags & ts.TypeFlags.Object) walkMembers(type, trail);
}

/** Notes `symbol` when it is a type of ours that no entry point exports. */
function note(symbol, trail) {
  if (symbol.flags & ts.SymbolFlags.TypeParameter) return;
  if (!declaredInPackage(symbol) || exported.has(symbol)) return;
  const name = checker.getFullyQualifiedName(symbol).replace(/^"[^"]*"\./, '');
  if (!unnameable.has(name)) unnameable.set(name, trail);
}

function walkMembers(type, trail, constructors = true) {
  for (const property of checker.getPropertiesOfType(type)) {
    const declarations = property.declarations ?? [];
    if (declarations.length > 0 && declarations.every(hidden)) continue;
    const declaration = property.valueDeclaration ?? declarations[0];
    if (!declaration) continue;
    walk(checker.getTypeOfSymbolAtLocation(property, declaration), `${trail}.${property.name}`);
  }
  const kinds = constructors
    ? [ts.SignatureKind.Call, ts.SignatureKind.Construct]
    : [ts.SignatureKind.Call];
  for (const kind of kinds) {
    for (const signature of checker.getSignaturesOfType(type, kind)) {
      const declaration = signature.getDeclaration();
      if (declaration && hidden(declaration)) continue;
      for (const parameter of signature.getParameters()) {
        const at = parameter.valueDeclaration ?? declaration;
        walk(checker.getTypeOfSymbolAtLocation(parameter, at), `${trail}(${parameter.name})`);
      }
      for (const typeParameter of signature.getTypeParameters() ?? []) {
        const constraint = typeParameter.getConstraint();
        if (constraint) walk(constraint, `${trail}<${typeParameter.symbol.name}>`);
      }
      walk(signature.getReturnType(), `${trail}()`);
    }
  }
  for (const info of checker.getIndexInfosOfType(type)) walk(info.type, `${trail}[]`);
}

for (const [symbol, name] of exported) {
  if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) {
    walkMembers(checker.getDeclaredTypeOfSymbol(symbol), name);
  } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
    const aliased = checker.getDeclaredTypeOfSymbol(symbol);
    if (aliased.isUnionOrIntersection()) for (const member of aliased.types) walk(member, name);
    else if (aliased.flags & ts.TypeFlags.Object) walkMembers(aliased, name);
  }
  if (symbol.flags & ts.SymbolFlags.Value && symbol.valueDeclaration) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, symbol.valueDeclaration);
    walkMembers(type, name, !(symbol.flags & ts.SymbolFlags.Class));
  }
}
for (const [name, trail] of unnameable) {
  problems.push(
    `${name} is not exported by any entry point, yet the public API names it: ${trail}`,
  );
}

fs.rmSync(probeDir, { recursive: true, force: true });
if (problems.length > 0) {
  console.error(`public types: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(
  `public types OK: ${exported.size} exports of ${entries.length} entry points, each type they name importable; the package's declarations check (TypeScript ${ts.version})`,
);
