/**
 * Runtime rules (spec/manifest.md §5, and §4: webhook agents are free, per_run or per_unit — never quote). An a2a
 * agent names its agent card as `endpoint` and the card's skill it offers as `skill` (docs/a2a-agents.md).
 * Publishing rules (https only, no user-info, public addresses) are checked when publishing, not here.
 */
import { pricingModel } from './pricing.js';
import { section, type Report } from './util.js';
import { hasField, type JsonObject } from '../../json.js';

export const DEFAULT_TIMEOUT_S = 60;

export function checkRuntime(doc: JsonObject, report: Report): void {
  const runtime = section(doc, 'runtime');
  if (!runtime) return;
  const kind = runtime.kind;
  const remote = kind === 'mcp' || kind === 'webhook' || kind === 'a2a';

  if (hasField(runtime, 'endpoint')) {
    if (kind === 'node') {
      report('$.runtime.endpoint', 'does not belong to a node runtime (it runs agent.mjs next to holon.yaml)');
    } else if (typeof runtime.endpoint === 'string' && !isHttpUrl(runtime.endpoint)) {
      report('$.runtime.endpoint', 'must be an absolute http or https URL');
    }
  } else if (remote) {
    report('$.runtime.endpoint', `is required for ${aKind(kind)} runtime`);
  }

  if (kind === 'mcp' && !hasField(runtime, 'tool')) report('$.runtime.tool', 'is required for an mcp runtime: the tool to call');
  if (kind !== 'mcp' && hasField(runtime, 'tool')) {
    report('$.runtime.tool', `does not belong to ${aKind(kind)} runtime (only mcp agents name a tool)`);
  }
  if (kind === 'a2a' && !hasField(runtime, 'skill')) report('$.runtime.skill', "is required for an a2a runtime: the agent card's skill this version offers");
  if (kind !== 'a2a' && hasField(runtime, 'skill')) {
    report('$.runtime.skill', `does not belong to ${aKind(kind)} runtime (only a2a agents name a skill)`);
  }

  const model = pricingModel(doc);
  if (kind === 'webhook' && model === 'quote') {
    report('$.pricing.model', 'a webhook agent can be priced free, per_run or per_unit (units come with its streamed chunks), not quote');
  }
}

/** `a webhook`, `an mcp`, `an a2a`: the kind with its article, for messages. */
function aKind(kind: unknown): string {
  return `${kind === 'mcp' || kind === 'a2a' ? 'an' : 'a'} ${String(kind)}`;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
