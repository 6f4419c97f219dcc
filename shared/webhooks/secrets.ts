/**
 * Each account's webhook signing secrets (docs/webhooks.md), hosted mode. A secret is `whsec_` + the base64 of 32
 * random bytes (the Standard Webhooks format); it is shown once — in the answer that creates the account, and in the
 * answer of a rotation — and kept only sealed (`webhook_secrets`, migration 015), like endpoint credentials
 * (shared/crypto/seal.ts: AES-256-GCM under a key derived from HOLON_FILE_SECRET, here with its own HKDF info; the AAD
 * is `webhook:<account>`, so a row copied to another account does not decrypt).
 *
 * A rotation keeps the old secret signing until the end of the rotation window (HOLON_WEBHOOK_ROTATION_WINDOW_S,
 * default 24 h): every delivery then carries both signatures, space-separated, and a receiver holding either one
 * verifies it. After the window the old secret signs nothing and its row is deleted.
 */
import { randomBytes } from 'node:crypto';
import { HolonError } from '../core/errors.js';
import type { Db, Queryable } from '../db/connect.js';
import { fromColumns, type SealedColumns, type SealingKey, seal, sealingKey, toColumns, unseal, UnsealError } from '../crypto/seal.js';

const INFO = 'holon webhook signing secret v1';
const aad = (account: string) => `webhook:${account}`;

const NO_FILE_SECRET_MESSAGE = 'webhook secrets need HOLON_FILE_SECRET on this gateway';

/** A new secret: `whsec_<base64 of 32 random bytes>`. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

interface RotatedSecret {
  webhook_secret: string;
  /** Until when the previous secret still signs; null when the account had none. */
  previous_valid_until: string | null;
}

export interface WebhookSecrets {
  /** False without HOLON_FILE_SECRET: nothing can be stored, accounts have no secret. */
  readonly available: boolean;
  /** A new account's first secret, in the caller's transaction; undefined when not available. */
  mint(trx: Queryable, account: string): Promise<string | undefined>;
  /** A new current secret; the previous one signs until the end of the window. 503 when not available. */
  rotate(db: Db, account: string): Promise<RotatedSecret>;
  /** The secrets that sign the account's deliveries now, newest first (empty: none, or none readable). */
  signing(db: Db, account: string): Promise<string[]>;
}

interface Row extends SealedColumns {
  id: string;
  expired: boolean;
}

export function webhookSecrets(fileSecret: string | undefined, rotationWindowS: number): WebhookSecrets {
  const key: SealingKey | undefined = fileSecret ? sealingKey(fileSecret, INFO) : undefined;

  const insert = async (q: Queryable, k: SealingKey, account: string): Promise<string> => {
    const secret = generateWebhookSecret();
    await q('webhook_secrets').insert({ account, ...toColumns(seal(k, aad(account), secret)) });
    return secret;
  };

  return {
    available: key !== undefined,

    async mint(trx, account) {
      return key ? insert(trx, key, account) : undefined;
    },

    async rotate(db, account) {
      if (!key) throw new HolonError('webhooks_unavailable', NO_FILE_SECRET_MESSAGE);
      return db.transaction(async (trx) => {
        // One rotation at a time per account (two at once would both try to add the one current secret).
        await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`webhook-secret:${account}`]);
        await trx('webhook_secrets').where({ account }).where('expires_at', '<=', trx.fn.now()).delete();
        const previous = (await trx('webhook_secrets')
          .where({ account })
          .whereNull('expires_at')
          .update({ expires_at: trx.raw(`now() + make_interval(secs => ?)`, [rotationWindowS]) })
          .returning('expires_at')) as Array<{ expires_at: Date }>;
        const secret = await insert(trx, key, account);
        return { webhook_secret: secret, previous_valid_until: previous[0] ? new Date(previous[0].expires_at).toISOString() : null };
      });
    },

    async signing(db, account) {
      if (!key) return [];
      const rows = (await db('webhook_secrets')
        .where({ account })
        .orderBy('id', 'desc')
        .select('id', 'key_id', 'iv', 'ciphertext', 'tag', db.raw('(expires_at IS NOT NULL AND expires_at <= now()) AS expired'))) as Row[];
      if (rows.some((r) => r.expired)) {
        await db('webhook_secrets')
          .whereIn(
            'id',
            rows.filter((r) => r.expired).map((r) => r.id),
          )
          .delete();
      }
      const out: string[] = [];
      for (const r of rows) {
        if (r.expired) continue;
        try {
          out.push(unseal(key, aad(account), fromColumns(r)));
        } catch (e) {
          // Written under another HOLON_FILE_SECRET, or tampered with: it cannot sign; a rotation replaces it.
          if (!(e instanceof UnsealError)) throw e;
        }
      }
      return out;
    },
  };
}
