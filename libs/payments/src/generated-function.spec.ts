import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { probeGeneratedSteps } from '../spec-support/generated-steps-probe';
import { generateFunction, literal, property, stepPerTable } from './generated-function';

describe('generateFunction', () => {
  it('builds a function that sees its bindings as constants', () => {
    const add = generateFunction<(a: number) => number>(
      'add',
      { OFFSET: 40 },
      ['a'],
      'return a + OFFSET;',
    );
    expect(add?.(2)).toBe(42);
    expect(add?.name).toBe('add');
  });

  it('writes names as literals, so no name can become code', () => {
    const read = generateFunction<(o: Record<string, unknown>) => unknown>(
      'read',
      {},
      ['o'],
      `return ${property('o', '"]; throw new Error("injected"); //')};`,
    );
    expect(read?.({ '"]; throw new Error("injected"); //': 7 })).toBe(7);
    expect(literal('a\nb')).toBe('"a\\nb"');
  });

  it('refuses a __proto__ property, which would set a prototype instead', () => {
    expect(() => property('body', '__proto__')).toThrow(/__proto__/);
  });

  it('refuses names that are not identifiers, and bindings a parameter would shadow', () => {
    expect(() => generateFunction('a-b', {}, [], '')).toThrow(/not an identifier/);
    expect(() => generateFunction('f', { 'x; y': 1 }, [], '')).toThrow(/not an identifier/);
    expect(() => generateFunction('f', { input: 1 }, ['input'], '')).toThrow(/shadowed/);
  });

  it('makes the step of each table once, falling back to the loop when generation is refused', () => {
    type Step = () => string;
    const generate = jest.fn((table: { n: number }): Step | undefined =>
      table.n > 0 ? () => 'generated' : undefined,
    );
    const byTable = jest.fn((): Step => () => 'by table');
    const stepOf = stepPerTable(generate, byTable);
    const positive = { n: 1 };
    const refused = { n: 0 };

    expect(stepOf(positive)()).toBe('generated');
    expect(stepOf(positive)()).toBe('generated');
    expect(stepOf(refused)()).toBe('by table');
    expect(stepOf(refused)()).toBe('by table');
    expect(generate).toHaveBeenCalledTimes(2);
    expect(byTable).toHaveBeenCalledTimes(1);
  });

  it('lets the library work the same where code generation is disallowed', () => {
    const probe = path.join(__dirname, '../spec-support/generated-steps-probe.ts');
    const output = execFileSync(
      process.execPath,
      ['--disallow-code-generation-from-strings', '-r', 'ts-node/register/transpile-only', probe],
      {
        encoding: 'utf8',
        env: { ...process.env, TS_NODE_PROJECT: path.join(__dirname, '../../../tsconfig.json') },
      },
    );
    const restricted = JSON.parse(output) as { canGenerate: boolean; cases: unknown[] };
    const here = JSON.stringify(probeGeneratedSteps());

    expect(restricted.canGenerate).toBe(false);
    expect(restricted.cases).toHaveLength(6);
    // As text, so that the order of every body's and record's keys is compared too.
    expect(output.replace('"canGenerate":false', '"canGenerate":true')).toBe(here);
  });
});
