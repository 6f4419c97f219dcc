/**
 * A2A agents (docs/a2a-agents.md): a published a2a version keeps the agent card fetched and checked when it was
 * published (`a2a_card`, the card as the agent served it, signatures included); the runtime uses it, so a card changed
 * later does not change a published version's behaviour. Null for every other version.
 */
export const name = '032_a2a_cards';

export const statements = [`ALTER TABLE published_versions ADD COLUMN a2a_card jsonb CHECK (a2a_card IS NULL OR jsonb_typeof(a2a_card) = 'object')`];
