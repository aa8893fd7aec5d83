// The mock engine's LoRA adapters (SGLang's LoadLoRAAdapter / UnloadLoRAAdapter /
// ListLoadedLoRAAdapters): a table of loaded adapters, refusing what SGLang refuses
// (a name or id already loaded, an adapter folder it cannot read, unloading an unknown
// adapter) with success=false and a message. A Generate naming an adapter that is not
// loaded fails with INVALID_ARGUMENT. The received log records each request's lora_id.

import { existsSync } from 'node:fs';
import { Code, ConnectError } from '@connectrpc/connect';

export interface MockAdapter {
  id: string;
  name: string;
  path: string;
  pinned: boolean;
}

export class MockAdapters {
  private readonly byId = new Map<string, MockAdapter>();
  /** Every load and unload asked, in order (for tests). */
  readonly calls: Array<{ op: 'load' | 'unload'; name: string; id: string; ok: boolean }> = [];

  load(a: MockAdapter): { success: boolean; message: string; loadedLoraIds: string[] } {
    const id = a.id || a.name;
    let message = '';
    if (!a.name) message = 'lora_name is required';
    else if (this.byId.has(id) || [...this.byId.values()].some((x) => x.name === a.name)) message = `LoRA adapter ${a.name} (id ${id}) is already loaded`;
    else if (!existsSync(a.path)) message = `cannot read LoRA adapter at ${a.path}: no such directory`;
    if (!message) this.byId.set(id, { ...a, id });
    this.calls.push({ op: 'load', name: a.name, id, ok: !message });
    return { success: !message, message: message || `loaded ${a.name}`, loadedLoraIds: [...this.byId.keys()] };
  }

  unload(name: string, id: string): { success: boolean; message: string; loadedLoraIds: string[] } {
    const key = id || [...this.byId.values()].find((x) => x.name === name)?.id || '';
    const ok = this.byId.delete(key);
    this.calls.push({ op: 'unload', name, id: key, ok });
    return { success: ok, message: ok ? `unloaded ${name}` : `LoRA adapter ${name || id} is not loaded`, loadedLoraIds: [...this.byId.keys()] };
  }

  list(): MockAdapter[] {
    return [...this.byId.values()];
  }

  /** A Generate's lora_id must name a loaded adapter. */
  check(loraId: string): void {
    if (loraId && !this.byId.has(loraId)) throw new ConnectError(`LoRA adapter ${loraId} is not loaded`, Code.InvalidArgument);
  }
}
