/**
 * The JSON Schema engine of the gateway: ajv (draft 2020-12) + ajv-formats, with RE2 as the regex engine.
 *
 * RE2 runs in linear time, so an author's `pattern` such as `^(a+)+$` cannot freeze validation,
 * and a regex RE2 cannot compile (back-references, look-around) makes the schema invalid.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import RE2 from 're2';
import type { Problem } from '../errors.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

type RegExpEngine = NonNullable<NonNullable<ConstructorParameters<typeof Ajv2020>[0]>['code']>['regExp'];

/** RE2 presented as ajv's `code.regExp` engine. */
const re2Engine: RegExpEngine = Object.assign((pattern: string, flags?: string) => new RE2(pattern, flags ?? 'u'), { code: 'new (require("re2"))' });

/**
 * A new ajv. `validateSchema: false` skips checking each schema against the draft 2020-12 metaschema as it compiles
 * (compiling that metaschema is most of a new instance's first compile): for schemas checked against it already.
 */
export function createAjv(options: { allErrors?: boolean; validateSchema?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: options.allErrors ?? true,
    validateSchema: options.validateSchema ?? true,
    strict: false,
    validateFormats: true,
    code: { regExp: re2Engine },
    // Author schemas are data: never let one pull in a remote schema.
    loadSchema: undefined,
  });
  addFormats(ajv);
  return ajv;
}

/** Turn ajv errors into our problems, with paths rooted at `base` ("$.interface.input" or "$"). */
export function ajvProblems(errors: ErrorObject[] | null | undefined, base = '$'): Problem[] {
  return (errors ?? []).map((e) => ({
    path:
      base +
      pointerToPath(e.instancePath) +
      (e.keyword === 'required' ? pathSegment((e.params as { missingProperty: string }).missingProperty) : '') +
      (e.keyword === 'additionalProperties' ? pathSegment((e.params as { additionalProperty: string }).additionalProperty) : ''),
    message: describeAjvError(e),
  }));
}

function describeAjvError(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return `must be ${String((e.params as { type: string }).type).replace(',', ' or ')}`;
    case 'enum':
      return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}

function pointerToPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^(0|[1-9][0-9]*)$/.test(seg) ? `[${seg}]` : pathSegment(seg)))
    .join('');
}

function pathSegment(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

export type { ValidateFunction };
