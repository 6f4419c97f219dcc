/**
 * The numbered captures of a RegExp route (`/^\/v0\/agents\/([^/]+)\/([^/]+)$/`): Express has decoded them
 * already. Express types them `string`; a group that took no part in the match reads as undefined.
 */
import type { Request } from 'express';

/** Capture `index` (0-based), or undefined when its group did not match. */
export function capture(req: Request, index: number): string | undefined {
  const value: string | undefined = req.params[index];
  return value;
}

/** Capture `index` as text: `String()` of it (a group that did not match reads "undefined", as it always has). */
export function captured(req: Request, index: number): string {
  return String(capture(req, index));
}
