import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/services/errors.ts';
import { clientKey, FairShare } from '../../src/services/fair-share.ts';
import { Metrics } from '../../src/services/metrics.ts';

function refusal(f: () => unknown): ServiceError {
  try {
    f();
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('fair share of the analysis', () => {
  it('bounds the jobs one client has in flight, and frees a place when one ends', () => {
    const m = new Metrics();
    const fs = new FairShare({ clientJobs: 2, clientJobsPerMinute: 0, comparisonJobs: 0 }, m);
    const a = fs.admit('10.0.0.1', 'c1', 1);
    fs.admit('10.0.0.1', 'c2', 1);
    const e = refusal(() => fs.admit('10.0.0.1', 'c3', 1));
    expect(e.code).toBe('rate-limited');
    expect(e.message).toMatch(/ANALYSIS_CLIENT_JOBS\b/);
    expect(e.detail.retryAfterSeconds).toBeGreaterThan(0);
    // Another client is not affected.
    fs.admit('10.0.0.2', 'c1', 1);
    a.release();
    a.release(); // idempotent
    fs.admit('10.0.0.1', 'c3', 1);
    expect(refusal(() => fs.admit('10.0.0.1', 'c4', 1)).code).toBe('rate-limited');
    expect(m.render()).toMatch(/^stagediff_analysis_rejected_total\{reason="client-jobs"\} 2$/m);
  });

  it("counts parses against the client's jobs in flight, not the comparison's nor the views' budget", async () => {
    const m = new Metrics();
    const fs = new FairShare({ clientJobs: 2, clientJobsPerMinute: 2, comparisonJobs: 1 }, m);
    let finish = () => {};
    const running = fs.parse('10.0.0.1', () => new Promise<string>((r) => (finish = () => r('ok'))));
    // A view of a comparison is not refused by the parse (parses take no comparison's place)…
    fs.admit('10.0.0.1', 'c1', 1).release();
    // …but the client's second job in flight is its last.
    const view = fs.admit('10.0.0.1', 'c1', 1);
    await expect(fs.parse('10.0.0.1', async () => 'never')).rejects.toThrow(/ANALYSIS_CLIENT_JOBS\b/);
    view.release();
    finish();
    expect(await running).toBe('ok');
    // The views spent the budget (2 of 2): parses are not charged to it (uploads have RATE_LIMIT_WRITES).
    expect(refusal(() => fs.admit('10.0.0.1', 'c1', 1)).message).toMatch(/ANALYSIS_CLIENT_JOBS_PER_MINUTE=2/);
    expect(await fs.parse('10.0.0.1', async () => 'parsed')).toBe('parsed');
    // A job that fails still frees its place.
    await expect(fs.parse('10.0.0.2', async () => Promise.reject(new Error('bad')))).rejects.toThrow('bad');
    expect(fs.inFlight).toBe(0);
  });

  it('charges work known only once done to the client that started it, a minute of debt at most', () => {
    let t = 0;
    const fs = new FairShare({ clientJobs: 0, clientJobsPerMinute: 10, comparisonJobs: 0 }, new Metrics(), () => t);
    const big = fs.admit('10.0.0.1', 'c1', 1);
    big.charge(7);
    big.release();
    // 10 − 1 − 7 = 2 left: two more views, then the budget is spent.
    fs.admit('10.0.0.1', 'c1', 1).release();
    fs.admit('10.0.0.1', 'c1', 1).release();
    const e = refusal(() => fs.admit('10.0.0.1', 'c1', 1));
    expect(e.message).toMatch(/ANALYSIS_CLIENT_JOBS_PER_MINUTE=10/);
    // Another client is not charged.
    fs.admit('10.0.0.2', 'c1', 1).release();
    // A charge past the budget is a debt of one minute at most: paid back after a minute, not more.
    const huge = fs.admit('10.0.0.3', 'c1', 1);
    huge.charge(1000);
    huge.release();
    expect(refusal(() => fs.admit('10.0.0.3', 'c1', 1)).detail.retryAfterSeconds).toBe(66);
    t += 59_000;
    expect(refusal(() => fs.admit('10.0.0.3', 'c1', 1)).code).toBe('rate-limited');
    t += 8_000;
    fs.admit('10.0.0.3', 'c1', 1).release();
  });

  it('bounds the jobs of one comparison whatever the clients', () => {
    const m = new Metrics();
    const fs = new FairShare({ clientJobs: 0, clientJobsPerMinute: 0, comparisonJobs: 3 }, m);
    for (let i = 0; i < 3; i++) fs.admit(`10.0.0.${i}`, 'busy', 1);
    const e = refusal(() => fs.admit('10.0.0.9', 'busy', 1));
    expect(e.message).toMatch(/ANALYSIS_COMPARISON_JOBS/);
    fs.admit('10.0.0.9', 'other', 1);
    expect(m.render()).toMatch(/reason="comparison-jobs"\} 1$/m);
  });

  it('charges the cost of each job to a per-minute budget that refills with time, and says when to retry', () => {
    let now = 1_000_000;
    const m = new Metrics();
    const fs = new FairShare({ clientJobs: 0, clientJobsPerMinute: 12, comparisonJobs: 0 }, m, () => now);
    fs.admit('10.0.0.1', 'c', 6).release(); // a wide PNG
    fs.admit('10.0.0.1', 'c', 4).release();
    const e = refusal(() => fs.admit('10.0.0.1', 'c', 4));
    expect(e.message).toMatch(/ANALYSIS_CLIENT_JOBS_PER_MINUTE=12; this view costs 4/);
    // 2 left, 4 needed: 2 more at 12 per minute is 10 s.
    expect(e.detail.retryAfterSeconds).toBe(10);
    // check() refuses the same way without charging anything.
    expect(refusal(() => fs.check('10.0.0.1', 'c', 4)).code).toBe('rate-limited');
    now += 10_000;
    fs.admit('10.0.0.1', 'c', 4).release();
    expect(refusal(() => fs.admit('10.0.0.1', 'c', 1)).detail.retryAfterSeconds).toBe(5);
    // The budget never grows past one minute's worth.
    now += 3_600_000;
    fs.admit('10.0.0.1', 'c', 12).release();
    expect(refusal(() => fs.admit('10.0.0.1', 'c', 1)).code).toBe('rate-limited');
    expect(m.render()).toMatch(/reason="client-rate"\} 4$/m);
  });

  it('admits everything when every bound is 0', () => {
    const fs = new FairShare({ clientJobs: 0, clientJobsPerMinute: 0, comparisonJobs: 0 }, new Metrics());
    for (let i = 0; i < 1000; i++) fs.admit('10.0.0.1', 'c', 8);
    expect(fs.inFlight).toBe(1000);
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 one', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:ffff:ffff:ffff:fffe')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    const fs = new FairShare({ clientJobs: 1, clientJobsPerMinute: 0, comparisonJobs: 0 }, new Metrics());
    fs.admit('2001:db8:1:2::10', 'c', 1);
    expect(refusal(() => fs.admit('2001:db8:1:2:9::20', 'c', 1)).code).toBe('rate-limited');
    fs.admit('2001:db8:1:3::10', 'c', 1);
  });
});
