/**
 * Call-time validation of inputs and outputs against a manifest's interface schemas (RE2 regexes, ajv-formats).
 * Validators are compiled once per manifest and kept in a small bounded cache.
 */
import { HolonError, type Problem } from '../errors.js';
import { ajvProblems, type ValidateFunction } from '../schema/ajv.js';
import { compileAuthorSchema } from './rules/author-schema.js';
import type { Manifest } from './types.js';

export interface InterfaceValidator {
  /** Problems of a call's input, paths rooted at `$`; empty when valid. */
  input: (value: unknown) => Problem[];
  /** Problems of a run's output, paths rooted at `$`; empty when valid. */
  output: (value: unknown) => Problem[];
  /** Problems of one streamed chunk (`interface.stream.chunk`); undefined when the agent declares no stream. */
  chunk?: (value: unknown) => Problem[];
}

const MAX_CACHED = 256;
/** Same manifest object: no work at all. */
const byObject = new WeakMap<Manifest, InterfaceValidator>();
/** Same id@version: reused only when the schemas are the same (a dev manifest may be edited in place). */
const byVersion = new Map<string, { fingerprint: string; validator: InterfaceValidator }>();

export function compileInterface(manifest: Manifest): InterfaceValidator {
  const hit = byObject.get(manifest);
  if (hit) return hit;

  const key = `${manifest.id}@${manifest.version}`;
  const fingerprint = JSON.stringify([manifest.interface.input, manifest.interface.output, manifest.interface.stream ?? null]);
  const cached = byVersion.get(key);
  let validator: InterfaceValidator;
  if (cached && cached.fingerprint === fingerprint) {
    validator = cached.validator;
    byVersion.delete(key); // re-insert below: most recently used last
  } else {
    validator = {
      input: checker(compile(manifest, 'input')),
      output: checker(compile(manifest, 'output')),
      ...(manifest.interface.stream ? { chunk: checker(compile(manifest, 'chunk')) } : {}),
    };
  }
  byVersion.set(key, { fingerprint, validator });
  while (byVersion.size > MAX_CACHED) byVersion.delete(byVersion.keys().next().value!);
  byObject.set(manifest, validator);
  return validator;
}

function compile(manifest: Manifest, side: 'input' | 'output' | 'chunk'): ValidateFunction {
  try {
    return compileAuthorSchema(side === 'chunk' ? manifest.interface.stream!.chunk : manifest.interface[side]);
  } catch (e) {
    // A validated manifest always compiles; reaching this is a gateway bug, never billed.
    throw new HolonError('gateway_error', `the ${side} schema of ${manifest.id}@${manifest.version} could not be compiled: ${(e as Error).message}`);
  }
}

function checker(validate: ValidateFunction): (value: unknown) => Problem[] {
  return (value) => {
    try {
      return validate(value) ? [] : ajvProblems(validate.errors, '$');
    } catch (e) {
      // e.g. a cyclic value handed over by a dev runtime
      return [{ path: '$', message: `could not be validated: ${(e as Error).message}` }];
    }
  };
}
