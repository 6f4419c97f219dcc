/**
 * `@a2a-js/sdk`'s own client against a gateway (docs/a2a.md): built from the card at `cardUrl` by the SDK's
 * ClientFactory, over JSON-RPC or HTTP+JSON, every request carrying `key` (and `headers`) through the transports'
 * fetch. Messages are the SDK's types: `dataMessage` puts an input in one data part.
 */
import { type Message, Role } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';

export type A2aBinding = 'JSONRPC' | 'HTTP+JSON';

export function a2aClient(cardUrl: string, options: { key?: string; headers?: Record<string, string>; binding?: A2aBinding } = {}): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (options.key) headers.set('authorization', `Bearer ${options.key}`);
    for (const [k, v] of Object.entries(options.headers ?? {})) headers.set(k, v);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [options.binding ?? 'JSONRPC'],
    }),
  );
  return factory.createFromUrl(cardUrl, '');
}

let n = 0;

/** A user message whose one data part is `input`; `extra`: taskId, contextId, metadata. */
export function dataMessage(input: unknown, extra: Partial<Pick<Message, 'taskId' | 'contextId' | 'metadata'>> = {}): Message {
  n += 1;
  return {
    messageId: `m-${process.pid}-${n}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: input }, metadata: undefined, filename: '', mediaType: 'application/json' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}
