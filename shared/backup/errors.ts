/** A backup or restore refused for a reason an operator can act on; its message says what and why, in plain words. */
export class BackupError extends Error {
  override name = 'BackupError';
}
