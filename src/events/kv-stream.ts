// The namespace's JetStream stream of KV event batches, made by whichever side comes
// first (engines and frontends both ensure it). Limits keep it bounded: an hour of
// history, at most 100k batches per worker; a frontend that starts later replays a
// worker's batches from the oldest kept.

import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { kvStream } from './subjects.js';

export async function ensureKvStream(jsm: JetStreamManager, namespace: string): Promise<string> {
  const { name, subjects } = kvStream(namespace);
  try {
    await jsm.streams.info(name);
    return name;
  } catch {
    /* missing: create it */
  }
  try {
    await jsm.streams.add({
      name,
      subjects: [subjects],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: 3600 * 1e9,
      max_msgs_per_subject: 100_000,
      duplicate_window: 120 * 1e9,
    });
  } catch (err) {
    // Made by someone else meanwhile.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
  return name;
}
