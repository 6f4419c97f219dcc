export * from './accounts.js';
export * from './entries.js';
export * from './audit.js';
export * from './holds.js';
