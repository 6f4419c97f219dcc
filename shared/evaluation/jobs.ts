/**
 * The evaluation queue (spec/evals.md): one job per published version, added when the version is listed and taken
 * by an evaluator. The payload names the version only.
 */
export const EVALUATE_QUEUE = 'evaluate';

export interface EvaluationJob {
  agentId: string;
  version: string;
}
