// Disaggregated serving's per-model settings (flags: --disagg-bootstrap-port, --disagg-rendezvous-timeout-secs).

export interface PdSettings {
  /** An SGLang prefill worker's bootstrap port when its engine does not report one. */
  bootstrapPort: number;
  /** Longest wait for decode's first output once the prefill leg is over (ms). */
  rendezvousTimeoutMs: number;
}

export const DEFAULT_PD_SETTINGS: PdSettings = { bootstrapPort: 8998, rendezvousTimeoutMs: 30_000 };
