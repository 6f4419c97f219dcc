/**
 * What signing and logging cost per receipt (section `signing` of `npm run bench`, docs/PERFORMANCE.md): the CPU of
 * signing a receipt and hashing its leaf (shared/receipts/signing.ts) on this thread, the log append's own time in a
 * settle-like transaction against Postgres (`holon_log_append`, one receipt and a batch of 16), and signing a
 * checkpoint of the tree so made. The gateway section's CPU per paid call puts the first figure in proportion.
 */
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../shared/db/connect.js';
import { checkpointNow } from '../shared/receipts/checkpoints.js';
import { signAndLog } from '../shared/receipts/log.js';
import { signAndHash } from '../shared/receipts/signing.js';
import { insertedReceiptView, receiptRow } from '../shared/receipts/store.js';
import { generateSigningKey } from '../shared/signing/keys.js';

type Record = (name: string, value: number | string, unit?: string) => void;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A settled, billed receipt's values, as the settler writes them. */
function values(id: string) {
  return receiptRow({
    id,
    mandateId: 'bench/signing',
    caller: 'bench/assistant',
    agent: 'examples/echo-upper@1.0.0',
    status: 'succeeded',
    worstCase: 10_000n,
    currency: 'EUR',
    payer: 'bench',
    billed: true,
    costOwn: 10_000n,
    splits: [
      { account: 'examples', amount: 9_000n },
      { account: 'platform', amount: 1_000n },
    ],
    durationMs: 3,
  });
}

export async function signingBench(url: string, record: Record): Promise<void> {
  const key = generateSigningKey();
  const view = insertedReceiptView(values('r_bench'), new Date());
  const n = 3000;
  for (let i = 0; i < 200; i++) await signAndHash(key, view);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < n; i++) await signAndHash(key, view);
  const wallUs = ((performance.now() - started) * 1000) / n;
  const used = process.cpuUsage(cpu);
  record('sign + leaf hash per receipt, wall', wallUs, 'µs');
  record('sign + leaf hash per receipt, CPU (this process)', (used.user + used.system) / n, 'µs');

  const db = await openDatabase({ url, poolMax: 2 });
  try {
    let seq = 0;
    /** The time signAndLog takes in a settle-like transaction, the rows' own INSERT left out: signing and the append. */
    const appendMs = async (batch: number): Promise<number> => {
      let insertMs = 0;
      let totalMs = 0;
      await db.knex.transaction(async (trx) => {
        const at = new Date(((await trx.raw('SELECT now() AS at')) as { rows: Array<{ at: Date }> }).rows[0]!.at);
        const rows = Array.from({ length: batch }, () => values(`r_bench_${seq++}`));
        const began = performance.now();
        await signAndLog(
          trx,
          key,
          rows.map((v) => insertedReceiptView(v, at)),
          async (signatures) => {
            const insertBegan = performance.now();
            await trx('receipts').insert(rows.map((v, i) => ({ ...v, signature: signatures[i]! })));
            insertMs = performance.now() - insertBegan;
          },
        );
        totalMs = performance.now() - began;
      });
      return totalMs - insertMs;
    };
    for (const batch of [1, 16]) {
      for (let i = 0; i < 20; i++) await appendMs(batch);
      const samples: number[] = [];
      for (let i = 0; i < 200; i++) samples.push(await appendMs(batch));
      record(`sign + log ${batch} receipt(s) in the writing transaction, p50`, median(samples), 'ms');
      if (batch > 1) record(`sign + log ${batch} receipt(s): per receipt`, median(samples) / batch, 'ms');
    }
    const ctx = { db: db.knex, signingKey: key, settings: { logOrigin: 'bench.localhost/receipts' } };
    const began = performance.now();
    const checkpoint = await checkpointNow(ctx);
    record(`signing a checkpoint of ${checkpoint.size} receipts`, performance.now() - began, 'ms');
  } finally {
    await db.close();
  }
}
