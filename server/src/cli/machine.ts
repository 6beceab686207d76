import { availableParallelism, cpus, hostname, loadavg, release } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** The machine's state before a run: other work on it skews what a stage measures. */
export interface MachineState {
  loadAverage: [number, number, number];
  cpuIdlePercent: number;
  cores: number;
  busy: boolean;
  /** Why it counts as busy, in words; null when it is quiet. */
  reason: string | null;
}

/** Below this share of idle CPU (all cores) in the second before a run, the machine counts as busy. */
export const BUSY_IDLE_PERCENT = 80;

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}

/**
 * Samples the CPU for `ms` milliseconds. The 1-minute load average also counts the previous run's
 * own load, so the busy verdict rests on the idle share measured right now.
 */
export async function sampleMachine(ms = 1000): Promise<MachineState> {
  const la = loadavg() as [number, number, number];
  const a = cpuTimes();
  await sleep(ms);
  const b = cpuTimes();
  const total = b.total - a.total;
  const idle = total > 0 ? Math.round((1000 * (b.idle - a.idle)) / total) / 10 : 100;
  const cores = availableParallelism();
  const busy = idle < BUSY_IDLE_PERCENT;
  return {
    loadAverage: [round2(la[0]), round2(la[1]), round2(la[2])],
    cpuIdlePercent: idle,
    cores,
    busy,
    reason: busy
      ? `machine busy before the run: ${idle}% of ${cores} cores idle (load average ${la.map(round2).join(' ')}); other work skews this stage's figures`
      : null,
  };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** What names the machine in a capture record: its CPU model, kernel release and host name. */
export function machineIdentity(): { cpu: string | null; kernel: string; hostname: string } {
  const model = cpus()[0]?.model?.trim();
  return { cpu: model ? model : null, kernel: release(), hostname: hostname() };
}
