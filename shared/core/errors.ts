/**
 * The one error type of the gateway: a stable `code`, an HTTP status and a plain-words message,
 * plus every problem found when the error is about invalid input.
 */

/** One problem in a document: a JSON path ("$.pricing.amount") and a plain-words message. */
export interface Problem {
  path: string;
  message: string;
}

export class HolonError extends Error {
  override readonly name = 'HolonError';
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly problems: readonly Problem[] = [],
  ) {
    super(message);
  }

  toJSON(): { error: { code: string; message: string; problems?: readonly Problem[] } } {
    return {
      error: { code: this.code, message: this.message, ...(this.problems.length ? { problems: this.problems } : {}) },
    };
  }
}

/** Build a JSON path such as `$.interface.errors["bad-code"]` or `$.calls[2].max_cost`. */
export function jsonPath(...segments: ReadonlyArray<string | number>): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
