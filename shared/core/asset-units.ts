/**
 * Micro-units (the ledger's 6 decimals) and a token's base units (its `decimals`, at least 6), pure. A micro-unit is
 * always a whole number of base units, so micros → units is exact; units → micros rounds down (what a payer
 * authorized beyond the last micro-unit is never counted as budget).
 */
const MICRO_DECIMALS = 6;

function scale(decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < MICRO_DECIMALS) throw new RangeError(`a token needs at least ${MICRO_DECIMALS} decimals, not ${decimals}`);
  return 10n ** BigInt(decimals - MICRO_DECIMALS);
}

export function microsToUnits(micros: bigint, decimals: number): bigint {
  return micros * scale(decimals);
}

export function unitsToMicros(units: bigint, decimals: number): bigint {
  return units / scale(decimals);
}
