// Preloaded into a server under test (`node --expose-gc --import dist/bench/gc-probe.js ...`):
// on SIGUSR2 it runs a full GC and prints one line `gc-probe {json}` with
// process.memoryUsage(), so a bench can read live memory at known points of a run.

process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  process.stdout.write(`gc-probe ${JSON.stringify({ gc: gc !== undefined, ...process.memoryUsage() })}\n`);
});
