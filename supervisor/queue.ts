import type { MemoryQueueBroker, QueueBroker, QueueEntry } from '../engine/store/file/queue-broker';
import type { Channel } from './channel';

/** A worker's request to the file store's queue broker, which the supervisor holds. */
export interface QueueRequest {
  op: 'admit' | 'cancel' | 'add' | 'claim' | 'requeue' | 'finish' | 'pending';
  args: unknown[];
}

/**
 * The supervisor's side: answers a worker's queue request with the broker, the worker (its pid)
 * as the owner of what it claims, so that what a worker that exits was running waits again at once.
 */
export function answerQueue(broker: MemoryQueueBroker, owner: string, { op, args }: QueueRequest): unknown {
  switch (op) {
    case 'admit':
      return broker.admit(args[0] as string, args[1] as number);
    case 'cancel':
      return broker.cancel(args[0] as string);
    case 'add':
      return broker.add(args[0] as QueueEntry);
    case 'claim':
      return broker.claim(owner, args[0] as number, args[1] as number, args[2] as string[]);
    case 'requeue':
      return broker.requeue(args[0] as QueueEntry);
    case 'finish':
      return broker.finish(args[0] as QueueEntry);
    case 'pending':
      return broker.pending(args[0] as string);
    default:
      throw new Error(`unknown queue operation ${String(op)}`);
  }
}

/** A worker's side: the supervisor's broker over the IPC channel; `queue-wake` notes say work may be waiting. */
export function channelBroker(channel: Channel): QueueBroker {
  const ask = <T>(op: QueueRequest['op'], ...args: unknown[]) => channel.request<T>('queue', { op, args } satisfies QueueRequest);
  return {
    admit: (account, bound) => ask<boolean>('admit', account, bound),
    cancel: (account) => ask('cancel', account),
    add: (entry) => ask('add', entry),
    claim: (limit, perAccount, full) => ask<QueueEntry[]>('claim', limit, perAccount, full),
    requeue: (entry) => ask('requeue', entry),
    finish: (entry) => ask('finish', entry),
    pending: (account) => ask<number>('pending', account),
    onWork: (listener) => channel.handle('queue-wake', () => listener()),
  };
}
