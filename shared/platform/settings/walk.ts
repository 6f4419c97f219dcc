/** Each declared setting of a tree beside its value in a parsed config and its command-line override, depth first, in order. */
import { type Declarations, isSetting, type Setting } from './declare.js';

export interface Leaf {
  declared: Setting<unknown>;
  value: unknown;
  override: unknown;
}

/** A parsed config, its overrides, or a part of them: read by key only. */
type Values = object | undefined;

const at = (values: Values, key: string): unknown => (values as Readonly<Record<string, unknown>> | undefined)?.[key];

export function leaves(tree: Declarations, values: Values, overrides: Values): Leaf[] {
  return Object.entries(tree).flatMap(([key, d]) =>
    isSetting(d) ? [{ declared: d, value: at(values, key), override: at(overrides, key) }] : leaves(d, at(values, key) as Values, at(overrides, key) as Values),
  );
}
