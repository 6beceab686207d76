/**
 * Where a change starts, on small profiles written as text: the diff tree of two profiles (absolute
 * mode, so the expected figures are the text's own numbers) and the names changeOrigins picks from it.
 */
import { describe, expect, it } from 'vitest';
import { changeOrigins } from '../../src/analysis/change-origins.ts';
import { diffProfiles } from '../../src/analysis/diff.ts';
import { profileFromText } from '../helpers/profile-text.ts';

function origins(base: string, target: string, minDelta: number) {
  const d = diffProfiles(profileFromText(base), profileFromText(target), { sampleType: 'cpu', mode: 'absolute' });
  return changeOrigins(d.tree, { minDelta }).map((o) => ({
    name: o.name,
    change: o.change,
    base: o.base,
    target: o.target,
    delta: o.delta,
  }));
}

describe('change origins', () => {
  it('names a vanished subtree at its root, not the ancestors whose share grew', () => {
    // Dialing disappears: conn.serve and ServeHTTP keep their own work, so their share of the total
    // rises from 50 % to 100 %, yet nothing about them changed.
    const found = origins(
      `
      goexit;conn.serve;ServeHTTP;handler 50
      goexit;dialConnFor;dialConn;DialContext;connect 40
      goexit;dialConnFor;dialConn;tls.Handshake 10
      `,
      `
      goexit;conn.serve;ServeHTTP;handler 50
      `,
      5,
    );
    expect(found).toEqual([{ name: 'dialConnFor', change: 'removed', base: 50, target: 0, delta: -50 }]);
  });

  it('names a new subtree at its root', () => {
    expect(origins('main;handler;work 100', 'main;handler;work 100\nmain;handler;appendJSON 30', 5)).toEqual([
      { name: 'appendJSON', change: 'added', base: 0, target: 30, delta: 30 },
    ]);
  });

  it('follows the change down to the frame whose own time changed', () => {
    // handler and encode only pass on what marshal lost: marshal is named, they are not.
    expect(
      origins(
        'main;handler;encode;marshal 80\nmain;handler;other 20',
        'main;handler;encode;marshal 30\nmain;handler;other 20',
        5,
      ),
    ).toEqual([{ name: 'marshal', change: 'shrank', base: 80, target: 30, delta: -50 }]);
  });

  it('names the frame where a change spreads over many small callees', () => {
    const base = ['a', 'b', 'c', 'd', 'e', 'f'].map((f) => `main;encode;${f} 10`).join('\n');
    const target = ['a', 'b', 'c', 'd', 'e', 'f'].map((f) => `main;encode;${f} 6`).join('\n');
    // Each callee loses 4 (under the threshold of 5); together 24: encode is where the change lives.
    expect(origins(base, target, 5)).toEqual([{ name: 'encode', change: 'shrank', base: 60, target: 36, delta: -24 }]);
  });

  it('looks beneath a caller whose net change is nil: one callee swapped for another', () => {
    expect(
      origins(
        'main;handler;syncLog;write 30\nmain;handler;serve 70',
        'main;handler;asyncLog;enqueue 2\nmain;handler;serve 70\nmain;logLoop;write 28',
        5,
      ),
    ).toEqual([
      { name: 'syncLog', change: 'removed', base: 30, target: 0, delta: -30 },
      { name: 'logLoop', change: 'added', base: 0, target: 28, delta: 28 },
    ]);
  });

  it('names a change once: a followed callee whose net change is small is not counted again in its caller', () => {
    // finish nets −4 (write −8, pad +4) and read loses 3: serve's own part is read's −3, under the
    // threshold. Counting finish's −4 in serve's own part as well would name serve −7 beside write −8.
    expect(
      origins(
        'main;serve;finish;write 20\nmain;serve;finish;pad 10\nmain;serve;read 10\nmain;serve 50',
        'main;serve;finish;write 12\nmain;serve;finish;pad 14\nmain;serve;read 7\nmain;serve 50',
        5,
      ),
    ).toEqual([{ name: 'write', change: 'shrank', base: 20, target: 12, delta: -8 }]);
  });

  it('names a removed closure by the callee that does its work', () => {
    expect(origins('goexit;startDial.func1;dialConnFor;connect 40\ngoexit;serve 60', 'goexit;serve 60', 5)).toEqual([
      { name: 'dialConnFor', change: 'removed', base: 40, target: 0, delta: -40 },
    ]);
  });

  it('adds up a function named in several call paths, and leaves out changes under the threshold', () => {
    expect(
      origins('main;a;marshal 20\nmain;b;marshal 20\nmain;c 3', 'main;a;marshal 10\nmain;b;marshal 10\nmain;c 1', 5),
    ).toEqual([{ name: 'marshal', change: 'shrank', base: 40, target: 20, delta: -20 }]);
  });

  it('finds nothing where nothing changed', () => {
    expect(origins('main;a 10\nmain;b 5', 'main;b 5\nmain;a 10', 1)).toEqual([]);
  });
});
