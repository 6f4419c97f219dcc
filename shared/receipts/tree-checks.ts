/**
 * What a receipt tree must be beyond each receipt's own signature (docs/receipts.md, "Verifying a tree"). A receipt's
 * signature covers neither `signature` nor `children`, so a holder could show a signed receipt under a parent it
 * does not belong to, twice, or not at all; these rules catch what the signed fields make checkable:
 *
 * - **parent**: every child's (signed) `parent` is the id of the receipt it is listed under;
 * - **distinct**: no receipt id appears twice anywhere in the tree;
 * - **downstream**: a receipt whose signed `cost.downstream` is not zero passed its children's cost through
 *   (`passthrough`: only then is it other than zero, and then it is exactly the sum of its children's `cost.total`,
 *   shared/calls/settle/settle.ts), so the totals of the children shown must add up to it, in its currency. A
 *   receipt with `downstream` zero tells nothing about its children (`included`: the author paid them), so children
 *   removed from it cannot be told from none.
 *
 * Pure: answers every rule broken, each naming the receipt and the rule; an empty list when the tree holds.
 */
import { formatAmount, tryParseAmount } from '../core/money.js';

/** The fields of a receipt these rules read (a receipt view, as received: nothing is trusted to be there). */
export interface TreeReceipt {
  id?: unknown;
  parent?: unknown;
  currency?: unknown;
  cost?: { downstream?: unknown; total?: unknown } | unknown;
  children?: unknown;
}

export interface TreeProblem {
  /** The receipt the rule is about (a child for `parent` and `distinct`, the parent for `downstream`). */
  receipt: string;
  rule: 'parent' | 'distinct' | 'downstream' | 'shape';
  detail: string;
}

const idOf = (r: TreeReceipt): string => (typeof r.id === 'string' ? r.id : '?');

function amountOf(r: TreeReceipt, field: 'downstream' | 'total'): bigint | null {
  const cost = r.cost as { downstream?: unknown; total?: unknown } | undefined;
  const parsed = tryParseAmount(cost?.[field]);
  return parsed.ok ? parsed.value : null;
}

/** Every rule the tree under `root` breaks, depth first. */
export function treeProblems(root: TreeReceipt): TreeProblem[] {
  const out: TreeProblem[] = [];
  const seen = new Set<string>();
  const visit = (r: TreeReceipt): void => {
    const id = idOf(r);
    if (seen.has(id)) out.push({ receipt: id, rule: 'distinct', detail: `receipt ${id} appears more than once in the tree` });
    seen.add(id);
    if (r.children === undefined) return;
    if (!Array.isArray(r.children)) {
      out.push({ receipt: id, rule: 'shape', detail: `the children of ${id} are not a list` });
      return;
    }
    const children = r.children.filter((c): c is TreeReceipt => c !== null && typeof c === 'object');
    if (children.length !== r.children.length) out.push({ receipt: id, rule: 'shape', detail: `a child of ${id} is not a receipt` });
    for (const child of children) {
      if (child.parent !== r.id) {
        out.push({
          receipt: idOf(child),
          rule: 'parent',
          detail: `child ${idOf(child)} names parent ${String(child.parent)}, but is shown under ${id}`,
        });
      }
    }
    const downstream = downstreamProblem(r, children);
    if (downstream) out.push(downstream);
    for (const child of children) visit(child);
  };
  visit(root);
  return out;
}

function downstreamProblem(r: TreeReceipt, children: readonly TreeReceipt[]): TreeProblem | null {
  const id = idOf(r);
  const downstream = amountOf(r, 'downstream');
  if (downstream === null) return { receipt: id, rule: 'shape', detail: `the cost.downstream of ${id} is not an amount` };
  if (downstream === 0n) return null;
  let sum = 0n;
  for (const child of children) {
    const total = amountOf(child, 'total');
    if (total === null || child.currency !== r.currency) {
      return { receipt: id, rule: 'downstream', detail: `child ${idOf(child)} of ${id} has no total in ${String(r.currency)} to add up` };
    }
    sum += total;
  }
  if (sum === downstream) return null;
  const cost = r.cost as { downstream?: unknown };
  return {
    receipt: id,
    rule: 'downstream',
    detail: `the children shown under ${id} total ${formatAmount(sum)}, but its signed cost.downstream is ${String(cost.downstream)} ${String(r.currency)}`,
  };
}
