import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatChange,
  formatCount,
  formatDeltaPercent,
  formatMs,
  formatNanos,
  formatOffsetSeconds,
  formatRatio,
  formatRps,
  formatShare,
  formatSignedValue,
  formatValue,
} from '../../src/api/format.ts';

describe('format', () => {
  it('formats durations from ns and ms', () => {
    expect(formatNanos(850)).toBe('850 ns');
    expect(formatNanos(12_300)).toBe('12.3 µs');
    expect(formatNanos(7_010_000_000)).toBe('7.01 s');
    expect(formatNanos(1_640_000_000)).toBe('1.64 s');
    expect(formatMs(3.19)).toBe('3.19 ms');
    expect(formatMs(0.85)).toBe('850 µs');
    expect(formatMs(1234)).toBe('1.23 s');
    expect(formatMs(null)).toBe('—');
  });
  it('formats offsets on a time axis to the hundredth of a second, zero unsigned', () => {
    expect(formatOffsetSeconds(2.314)).toBe('+2.31 s');
    expect(formatOffsetSeconds(-0.951)).toBe('−0.95 s');
    expect(formatOffsetSeconds(0)).toBe('0 s');
    expect(formatOffsetSeconds(0.004)).toBe('0 s');
    expect(formatOffsetSeconds(-0.004)).toBe('0 s');
    expect(formatOffsetSeconds(null)).toBe('—');
  });
  it('formats bytes and counts', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3.2 * 1024 * 1024)).toBe('3.2 MiB');
    expect(formatCount(950)).toBe('950');
    expect(formatCount(12_345)).toBe('12.3k');
    expect(formatCount(4_500_000)).toBe('4.5M');
  });
  it('formats rates, ratios and changes', () => {
    expect(formatRps(8589.52)).toBe('8,590 req/s');
    expect(formatRps(12.345)).toBe('12.3 req/s');
    expect(formatRatio(10.5)).toBe('×10.5');
    expect(formatRatio(0.2234)).toBe('×0.22');
    expect(formatRatio(1.032)).toBe('×1.03');
    expect(formatRatio(2.4)).toBe('×2.4');
    expect(formatRatio(1.0004)).toBe('×1');
    expect(formatChange(0.22)).toBe('−78 %');
    expect(formatChange(1.5)).toBe('+50 %');
    expect(formatChange(1)).toBe('±0 %');
    expect(formatChange(1.034)).toBe('+3.4 %');
    expect(formatShare(0.68)).toBe('68 %');
    expect(formatShare(0.042)).toBe('4.2 %');
    expect(formatDeltaPercent(0, 5)).toBe('new');
    expect(formatDeltaPercent(10, 0)).toBe('−100 %');
  });
  it('formats profile values by unit', () => {
    expect(formatValue(2_500_000, 'nanoseconds')).toBe('2.5 ms');
    expect(formatValue(2048, 'bytes')).toBe('2 KiB');
    expect(formatValue(0.25, 'fraction')).toBe('25 %');
    expect(formatValue(1500, 'nanoseconds/request')).toBe('1.5 µs/req');
    expect(formatValue(3, 'count')).toBe('3');
    expect(formatValue(7, 'widgets')).toBe('7 widgets');
    expect(formatSignedValue(-1_000_000, 'nanoseconds')).toBe('−1 ms');
    expect(formatSignedValue(2048, 'bytes')).toBe('+2 KiB');
  });
});
