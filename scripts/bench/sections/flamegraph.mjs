// Section "flamegraph": time to render the flamegraph of a large profile in Chromium (playwright-core).
// Slot reserved: the web client's owners fill it in; it must return a plain object and print its own
// small table.
export async function run() {
  console.log('flamegraph: not implemented yet (slot reserved for Chromium render timing)');
  return { status: 'not-implemented' };
}
