/**
 * File handles in a call's input (gateway.md §7 "Files"), pure:
 *   holon://files/<id>                   an uploaded file (POST /v0/files), usable by its owner's calls
 *   holon://evals/<capability>/<name>    a platform evaluation fixture: never usable by a caller
 * A handle may be a whole string of the input or sit inside one ("summarise holon://files/f_…"); every string value,
 * at any depth, is scanned (field names are not). The same scan decides what admission checks and which links an
 * agent gets, so a handle the check did not see never gets a link.
 */

/** An upload's id: `f_` + 22 base64url characters (128 random bits). */
export const FILE_ID = /^f_[A-Za-z0-9_-]{22}$/;

const FILE_HANDLE_PREFIX = 'holon://files/';

/** The most distinct file handles one call's input may name (their links travel in one header for webhooks). */
export const MAX_HANDLES_PER_CALL = 20;

export const fileHandle = (id: string): string => `${FILE_HANDLE_PREFIX}${id}`;

/** `holon://files/` or `holon://evals/` (scheme and kind in any case), then the characters an id or a path may hold. */
const HANDLE = /holon:\/\/(files|evals)\/([A-Za-z0-9._/-]*)/gi;

export interface HandleScan {
  /** Distinct upload ids, in the order first seen. */
  fileIds: string[];
  /** The first handle no caller may pass (an evaluation fixture, or a files handle whose id is malformed). */
  refused?: string;
}

/** Every handle in a JSON value. Iterative, so a deep input is cheap (its depth was bounded before). */
export function scanHandles(value: unknown): HandleScan {
  const ids = new Set<string>();
  let refused: string | undefined;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!v.includes('://')) continue;
      for (const m of v.matchAll(HANDLE)) {
        const kind = m[1]!.toLowerCase();
        // A files id ends where the id's characters end: `holon://files/f_…/page2` names f_…, `holon://files/x` nothing valid.
        const id = kind === 'files' ? /^[A-Za-z0-9_-]*/.exec(m[2]!)![0] : '';
        if (kind === 'files' && FILE_ID.test(id)) ids.add(id);
        else refused ??= m[0].slice(0, 200);
      }
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else for (const item of Object.values(v)) stack.push(item);
  }
  return { fileIds: [...ids], ...(refused !== undefined ? { refused } : {}) };
}
