/**
 * Admission's file check (gateway.md §7 "Files"; the rule: shared/files/access.ts): a call whose input names a file
 * it may not use is refused before anything is held — receipt `failed / file_not_found`, not billed, refused like a
 * rejected input (the input cannot be run as given). More handles than a call may carry: `rejected_input`.
 */
import type { Mandate } from '../../core/mandate/types.js';
import type { ServiceContext } from '../../context.js';
import { checkCallFiles } from '../../files/access.js';
import type { Refusal } from './types.js';

export async function fileRefusal(ctx: ServiceContext, input: unknown, mandate: Mandate): Promise<Refusal | undefined> {
  const check = await checkCallFiles(ctx.db, input, mandate, ctx.now());
  if (check.ok) return undefined;
  if (check.code === 'too_many_files') {
    return {
      code: 'rejected_input',
      status: 'rejected_input',
      reasons: [check.reason],
      problems: [{ path: '$.input', message: check.reason }],
    };
  }
  return { code: 'file_not_found', status: 'failed', errorCode: 'file_not_found', reasons: [check.reason] };
}
