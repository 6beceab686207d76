// Section "server": HTTP endpoints under load (wrk/ab against `npm start`). Slot reserved: the
// server's owners fill it in; it must return a plain object and print its own small table.
export async function run() {
  console.log('server: not implemented yet (slot reserved for endpoint latency/throughput under wrk)');
  return { status: 'not-implemented' };
}
