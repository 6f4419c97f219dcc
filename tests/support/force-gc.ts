/** A full garbage collection on demand, inside a test, without starting Node with --expose-gc. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
export const forceGc = runInNewContext('gc') as () => void;
