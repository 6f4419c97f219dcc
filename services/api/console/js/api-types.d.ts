/**
 * The API's types for the console's JSDoc (`@typedef {import('./api-types.js').Receipt} Receipt`), taken from
 * client/openapi.d.ts (generated from the route table: `npm run client:types`). Only the type checker reads this
 * file (tsconfig.console.json); the gateway serves no `.ts` file.
 */
import type { components, operations } from '../../../../client/openapi.js';

type Schemas = components['schemas'];
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body an operation answers with a status: `Answer<'readMe'>` (200), `Answer<'createKey', 201>`. */
export type Answer<Op extends keyof operations, S extends keyof operations[Op]['responses'] = 200 & keyof operations[Op]['responses']> = Json<
  operations[Op]['responses'][S]
>;

export type ErrorBody = Schemas['Error'];
export type Problem = Schemas['Problem'];
export type Receipt = Schemas['Receipt'];
export type MandateView = Schemas['MandateView'];
export type MandateDocument = Schemas['MandateDocument'];
export type Approval = Schemas['Approval'];
export type Balance = Schemas['Balance'];
export type KeyView = Schemas['KeyView'];
export type AgentCard = Schemas['AgentCard'];
export type AgentView = Schemas['AgentView'];
export type SearchResult = Schemas['SearchResult'];
export type AgentRecord = Schemas['AgentRecord'];
export type WindowRecord = Schemas['WindowRecord'];
export type RecordSummary = Schemas['RecordSummary'];
export type Evaluation = Schemas['Evaluation'];
export type EvaluationSuite = Schemas['EvaluationSuite'];
export type Pricing = Schemas['Pricing'];
export type DataPolicy = Schemas['DataPolicy'];
export type Runtime = Schemas['Runtime'];

export type Me = Answer<'readMe'>;
export type HumanMe = Extract<Me, { kind: 'human' }>;
export type Mandates = Answer<'listMandates'>;
export type ReceiptPage = Answer<'listReceipts'>;
export type Statement = Answer<'readStatement'>;
export type MyAgents = Answer<'listMyAgents'>;
export type MyVersion = MyAgents['versions'][number];
export type Payouts = Answer<'listPayouts'>;
export type PayoutView = Payouts['payouts'][number];
export type AdminAccounts = Answer<'listAccounts'>;
export type AdminAccount = AdminAccounts['accounts'][number];
export type ModerationLog = Answer<'readModerationLog'>;
