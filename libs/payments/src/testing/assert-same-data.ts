import { deepStrictEqual, fail, ok, strictEqual } from 'node:assert/strict';

/**
 * Whether `actual` equals `expected` as JSON data: the same keys and values, arrays as arrays,
 * whatever realm made them (a native driver's arrays fail `deepStrictEqual` under jest).
 */
export function assertSameData(actual: unknown, expected: unknown, path = 'value'): void {
  if (typeof expected !== 'object' || expected === null) {
    strictEqual(actual, expected, `${path} differs`);
    return;
  }
  if (Array.isArray(expected)) {
    ok(Array.isArray(actual), `${path} must be an array`);
    strictEqual(actual.length, expected.length, `${path} must have ${expected.length} items`);
    expected.forEach((item, index) => assertSameData(actual[index], item, `${path}[${index}]`));
    return;
  }
  if (Object.prototype.toString.call(actual) !== '[object Object]') {
    fail(`${path} must be a plain object`);
  }
  const given = actual as Record<string, unknown>;
  const keys = (value: object) =>
    Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort();
  deepStrictEqual(keys(given), keys(expected), `${path} must have the same fields`);
  for (const key of keys(expected)) {
    assertSameData(given[key], (expected as Record<string, unknown>)[key], `${path}.${key}`);
  }
}
