/**
 * Delegation rules (spec/manifest.md §7): `calls` entries and `downstream`.
 */
import { parseAgentRef } from '../../identifiers.js';
import { formatAmount, type Micros } from '../../money.js';
import { jsonPath } from '../../errors.js';
import { ownWorstCase } from './pricing.js';
import { amountField, section, type Report } from './util.js';
import { hasField, isJsonObject, type JsonObject } from '../../json.js';

export function checkCalls(doc: JsonObject, report: Report): void {
  const calls = Array.isArray(doc.calls) ? doc.calls : [];
  const costs: Array<{ index: number; cost: Micros }> = [];

  calls.forEach((entry, i) => {
    if (!isJsonObject(entry)) return;
    const path = jsonPath('calls', i);
    const byCapability = hasField(entry, 'capability');
    const byAgent = hasField(entry, 'agent');
    if (byCapability && byAgent) report(path, 'must name either a capability or an agent, not both');
    if (!byCapability && !byAgent) report(path, 'must name a capability or an agent');
    if (typeof entry.agent === 'string' && parseAgentRef(entry.agent) === null) {
      report(`${path}.agent`, `"${entry.agent}" must be "<namespace>/<name>" or "<namespace>/<name>@<semver range>"`);
    }
    const cost = amountField(entry, { key: 'max_cost', path: `${path}.max_cost` }, report);
    if (cost !== undefined) costs.push({ index: i, cost });
  });

  const currency = section(doc, 'pricing')?.currency;
  const money = (m: Micros) => (typeof currency === 'string' ? `${formatAmount(m)} ${currency}` : formatAmount(m));
  const downstream = section(doc, 'downstream');
  if (calls.length > 0 && !hasField(doc, 'downstream')) {
    report('$.downstream.mode', 'is required when calls are declared: "passthrough" or "included"');
  }
  if (!downstream) return;
  const cap = amountField(downstream, { key: 'cap', path: '$.downstream.cap' }, report);

  if (downstream.mode === 'passthrough') {
    if (calls.length > 0 && !hasField(downstream, 'cap')) {
      report('$.downstream.cap', 'is required with passthrough when calls are declared: the most all downstream calls of one run may cost');
    }
    if (cap === undefined) return;
    for (const { index, cost } of costs) {
      if (cost > cap) {
        report(jsonPath('calls', index, 'max_cost'), `${money(cost)} is more than downstream.cap (${money(cap)})`);
      }
    }
  } else if (downstream.mode === 'included') {
    const own = ownWorstCase(doc);
    if (own === undefined) return;
    for (const { index, cost } of costs) {
      if (cost > own) {
        report(
          jsonPath('calls', index, 'max_cost'),
          `${money(cost)} is more than the agent's own worst case (${money(own)}), which pays for its calls in included mode`,
        );
      }
    }
  }
}
