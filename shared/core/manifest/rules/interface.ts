/**
 * Interface rules (spec/manifest.md §3): the two JSON Schemas, declared errors, examples.
 */
import { jsonPath } from '../../errors.js';
import { ajvProblems, type ValidateFunction } from '../../schema/ajv.js';
import { RESERVED_ERROR_CODES } from '../types.js';
import { ERROR_CODE_PATTERN, ERROR_CODE_RE, PATTERN_MESSAGES } from '../schema.js';
import { checkAuthorSchema } from './author-schema.js';
import { section, type Report } from './util.js';
import { hasField, isJsonObject, type JsonObject } from '../../json.js';

const RESERVED = new Set<string>(RESERVED_ERROR_CODES);

export function checkInterface(doc: JsonObject, report: Report): void {
  const iface = section(doc, 'interface');
  if (!iface) return;

  const validators: Partial<Record<'input' | 'output', ValidateFunction>> = {};
  for (const side of ['input', 'output'] as const) {
    const schema = iface[side];
    if (!isJsonObject(schema)) continue; // wrong type or missing: reported by the schema stage
    const path = jsonPath('interface', side);
    const checked = checkAuthorSchema(schema, path);
    for (const p of checked.problems) report(p.path, p.message);
    if (checked.validate) validators[side] = checked.validate;
  }

  const stream = isJsonObject(iface.stream) ? iface.stream : undefined;
  if (stream && isJsonObject(stream.chunk)) {
    for (const p of checkAuthorSchema(stream.chunk, jsonPath('interface', 'stream', 'chunk')).problems) report(p.path, p.message);
  }

  const errors = isJsonObject(iface.errors) ? iface.errors : undefined;
  if (errors) {
    for (const [code, declared] of Object.entries(errors)) {
      const path = jsonPath('interface', 'errors', code);
      if (!ERROR_CODE_RE.test(code)) report(path, PATTERN_MESSAGES[ERROR_CODE_PATTERN]!);
      if (RESERVED.has(code)) report(path, `"${code}" is one of the gateway's own error codes and cannot be declared`);
      if (code === 'over_budget' && isJsonObject(declared) && declared.billed === true) {
        report(`${path}.billed`, 'must be false: over_budget refuses a run before any work is done, so it is never billed');
      }
      if (isJsonObject(declared) && typeof declared.description === 'string' && declared.description.trim() === '') {
        report(`${path}.description`, 'must not be empty');
      }
    }
  }

  const examples = iface.examples;
  if (!Array.isArray(examples)) return;
  examples.forEach((example, i) => {
    if (!isJsonObject(example)) return;
    const path = jsonPath('interface', 'examples', i);
    const hasOutput = hasField(example, 'output');
    const hasError = hasField(example, 'error');
    if (hasOutput && hasError) report(path, 'must have either an output or an error, not both');
    if (!hasOutput && !hasError) report(path, 'must have an output or an error');
    if (hasField(example, 'input')) validateExample(validators.input, example.input, `${path}.input`, report);
    if (hasOutput) validateExample(validators.output, example.output, `${path}.output`, report);
    if (hasError && typeof example.error === 'string' && !(errors && Object.hasOwn(errors, example.error))) {
      report(`${path}.error`, `"${example.error}" is not an error code declared in interface.errors`);
    }
  });
}

function validateExample(validate: ValidateFunction | undefined, value: unknown, path: string, report: Report): void {
  if (!validate) return; // the schema itself is invalid and already reported
  try {
    if (validate(value)) return;
    for (const p of ajvProblems(validate.errors, path)) report(p.path, p.message);
  } catch (e) {
    report(path, `could not be validated: ${(e as Error).message}`);
  }
}
