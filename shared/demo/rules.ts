/**
 * The public demo (gateway.md §7, `POST /v0/demo/{ns}/{name}`), its rules, pure (docs/demo.md):
 *   - which agents: our own. Shipped with the gateway (origin `shipped`: the directories of HOLON_REGISTRY, minus
 *     HOLON_EXCLUDE, which never reach the registry), in the platform's namespace `holon-labs/`, cheap (the worst case
 *     of one run at most DEMO_MAX_PRICE in its currency), and self-contained (no downstream `calls`: a demo run has no
 *     mandate to derive a sub-mandate from);
 *   - narrowed input: the whole body at most DEMO_MAX_BODY_BYTES, every string (values and field names) at most
 *     DEMO_MAX_STRING characters, and no file handle: the demo passes no uploaded file (no shipped agent offered in the
 *     demo takes one; its samples are text);
 *   - limits: DEMO_PER_VISITOR runs per visitor and DEMO_TOTAL in all per hour (services/api/routes/demo.ts counts
 *     them in the shared rate limiter).
 */
import { ownWorstCase } from '../core/pricing.js';
import { scanHandles } from '../files/handles.js';
import type { Problem } from '../core/errors.js';
import type { AgentVersion } from '../registry/agent-version.js';

/** The platform's namespace: the agents Holon itself ships (agents/). */
const DEMO_NAMESPACE = 'holon-labs';
/** 0.01 in micro-units of the agent's currency. */
const DEMO_MAX_PRICE = 10_000n;
export const DEMO_MAX_BODY_BYTES = 8 * 1024;
export const DEMO_MAX_STRING = 2000;
/** The largest output a demo answer carries (a bigger one is refused, not cut). */
export const DEMO_MAX_OUTPUT_BYTES = 32 * 1024;
const HOUR = 60 * 60_000;
export const DEMO_PER_VISITOR = { limit: 10, windowMs: HOUR } as const;
export const DEMO_TOTAL = { limit: 600, windowMs: HOUR } as const;

/** Why an agent is not offered in the demo, or undefined when it is. */
export function demoRefusal(agent: AgentVersion): string | undefined {
  const m = agent.manifest;
  if (agent.origin !== 'shipped' || !m.id.startsWith(`${DEMO_NAMESPACE}/`)) return 'the demo runs only agents Holon ships itself';
  if (m.calls.length > 0) return 'the demo runs only agents that call no other agent';
  if (ownWorstCase(m.pricing) > DEMO_MAX_PRICE) return 'the demo runs only cheap agents';
  return undefined;
}

/** What the demo refuses in an input that is otherwise the agent's (paths rooted at `$.input`). */
export function demoInputProblems(input: unknown): Problem[] {
  const problems: Problem[] = [];
  const stack: Array<{ value: unknown; path: string }> = [{ value: input, path: '$.input' }];
  while (stack.length && problems.length < 20) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > DEMO_MAX_STRING) problems.push({ path, message: `must be at most ${DEMO_MAX_STRING} characters in the demo` });
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) stack.push({ value: v, path: `${path}[${i}]` });
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k.length > DEMO_MAX_STRING) problems.push({ path, message: `has a field name longer than ${DEMO_MAX_STRING} characters` });
        stack.push({ value: v, path: /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k.slice(0, 100))}]` });
      }
    }
  }
  const handles = scanHandles(input);
  if (handles.fileIds.length > 0 || handles.refused !== undefined) {
    problems.push({ path: '$.input', message: 'names a file: the demo takes no uploaded file (call POST /v0/calls with a key for that)' });
  }
  return problems;
}
