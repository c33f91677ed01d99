import type { Coordinator } from '../engine/store/coordinator';
import type { QueueBroker } from '../engine/store/file/queue-broker';
import type { StoreChange } from '../engine/store/store';
import type { Channel } from './channel';
import { channelBroker } from './queue';

/**
 * A worker's side of sharing the data directory: locks granted by the supervisor in turn, and
 * changes carried to every other worker before the write that made them returns.
 */
export class ChannelCoordinator implements Coordinator {
  /** The file store's queue: the supervisor's broker. */
  readonly queue: QueueBroker;

  constructor(private readonly channel: Channel) {
    this.queue = channelBroker(channel);
  }

  async withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
    await this.channel.request('lock', { name });
    try {
      return await work();
    } finally {
      this.channel.notify('unlock', { name });
    }
  }

  publish(change: StoreChange): Promise<void> {
    return this.channel.request('publish', { change });
  }

  subscribe(listener: (change: StoreChange) => Promise<void>): void {
    this.channel.handle('change', ({ change }: { change: StoreChange }) => listener(change));
  }
}
