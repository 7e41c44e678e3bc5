/**
 * Functions generated once from the library's own tables (request fields, checks, body keys), so
 * that a call reads and writes each property by a literal name. A table-driven loop reads them by
 * a variable key (a megamorphic access, served from a cache the whole process shares): on real
 * sockets such a step cost ~10 µs per call against ~1 µs in a tight loop, and written out it does
 * not (docs/performance.md, "Generated steps"). Only names from the library's tables and constants
 * it owns ever reach the generated text; values are passed in as bindings, never as text.
 */

/** Names of the generated function, its parameters and its bindings: plain identifiers only. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * A function with `params` and `body`, which sees each of `bindings` as a constant of that name.
 * `undefined` when the runtime forbids code generation from strings
 * (`--disallow-code-generation-from-strings`): the caller then keeps its table-driven loop.
 * @internal
 */
export function generateFunction<F extends (...args: never[]) => unknown>(
  name: string,
  bindings: Readonly<Record<string, unknown>>,
  params: readonly string[],
  body: string,
): F | undefined {
  const names = Object.keys(bindings);
  for (const identifier of [name, ...params, ...names]) {
    if (!IDENTIFIER.test(identifier)) throw new Error(`${identifier} is not an identifier`);
  }
  const shadowed = names.filter((binding) => params.includes(binding));
  if (shadowed.length > 0) throw new Error(`bindings shadowed by parameters: ${shadowed.join()}`);
  let factory: (...values: unknown[]) => F;
  try {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the point of this file
    factory = new Function(
      ...names,
      `"use strict";\nreturn function ${name}(${params.join(', ')}) {\n${body}\n};`,
    ) as (...values: unknown[]) => F;
  } catch (error: unknown) {
    if (error instanceof EvalError) return undefined;
    throw error;
  }
  return factory(...names.map((key) => bindings[key]));
}

/** `name` as a JavaScript string literal. */
export function literal(name: string): string {
  return JSON.stringify(name);
}

/**
 * `object[name]` with `name` as a literal. A `__proto__` target would set a prototype instead of
 * a property: no table holds one, and this refuses it should one ever be added.
 */
export function property(object: string, name: string): string {
  if (name === '__proto__') throw new Error('__proto__ cannot be a generated property');
  return `${object}[${literal(name)}]`;
}
