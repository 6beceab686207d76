import { describe, expect, it } from 'vitest';
import { logGamma, pooledTTest, regularizedIncompleteBeta, studentTTwoSidedP } from '../../src/analysis/student-t.ts';

/*
 * Reference values printed by scipy 1.16.3 (numpy 2.2.0, Python 3.11.7), the versions apache-otava 0.8.0
 * installed (see fixtures/reference/change-points/README.md):
 *   2 * scipy.special.stdtr(df, -t), scipy.special.betainc(a, b, x), scipy.special.gammaln(x).
 */

// [t, df, two-sided p]
const TWO_SIDED: [number, number, number][] = [
  [0.001, 1, 0.9993633804398389],
  [0.5, 1, 0.7048327646991336],
  [1.0, 1, 0.49999999999999956],
  [2.0, 1, 0.2951672353008664],
  [3.5, 1, 0.17717106556580947],
  [6.0, 1, 0.10513691342250685],
  [12.0, 1, 0.05292935211917974],
  [40.0, 1, 0.015912179824051624],
  [0.001, 2, 0.99929289339559],
  [0.5, 2, 0.6666666666666667],
  [1.0, 2, 0.42264973081037427],
  [2.0, 2, 0.1835034190722739],
  [3.5, 2, 0.07282735005446933],
  [6.0, 2, 0.02667147321542477],
  [12.0, 2, 0.00687293367715846],
  [40.0, 2, 0.0006244146721847406],
  [0.001, 3, 0.9992648949694609],
  [0.5, 3, 0.651447964848151],
  [1.0, 3, 0.39100221895577053],
  [2.0, 3, 0.1393259685588431],
  [3.5, 3, 0.039481037619282774],
  [6.0, 3, 0.00927271489228466],
  [12.0, 3, 0.001245015800789336],
  [40.0, 3, 3.438068078915854e-5],
  [0.001, 5, 0.9992407867721976],
  [0.5, 5, 0.638298871640929],
  [1.0, 5, 0.36321746764912255],
  [2.0, 5, 0.10193947882985828],
  [3.5, 5, 0.017284431785293354],
  [6.0, 5, 0.001846138289594014],
  [12.0, 5, 7.089492517161528e-5],
  [40.0, 5, 1.8411962171772952e-7],
  [0.001, 10, 0.999221783374741],
  [0.5, 10, 0.6278936057429729],
  [1.0, 10, 0.3408931323020601],
  [2.0, 10, 0.07338803477074039],
  [3.5, 10, 0.0057265054298852106],
  [6.0, 10, 0.00013210886035478557],
  [12.0, 10, 2.92140882476998e-7],
  [40.0, 10, 2.2808577430857475e-12],
  [0.001, 29, 0.9992089629783623],
  [0.5, 29, 0.6208480841937813],
  [1.0, 29, 0.32558198801619365],
  [2.0, 29, 0.05494363718296719],
  [3.5, 29, 0.0015244463146546039],
  [6.0, 29, 1.5927908426174678e-6],
  [12.0, 29, 9.060708333137178e-13],
  [40.0, 29, 6.346877329729317e-27],
  [0.001, 48, 0.9992062601208651],
  [0.5, 48, 0.6193596576930802],
  [1.0, 48, 0.3223252185211165],
  [2.0, 48, 0.051175933840240447],
  [3.5, 48, 0.0010152350979649883],
  [6.0, 48, 2.507330963144914e-7],
  [12.0, 48, 4.669137132173719e-16],
  [40.0, 48, 1.6144804250662327e-38],
  [0.001, 100, 0.9992041077601035],
  [0.5, 100, 0.6181735658308867],
  [1.0, 100, 0.3197241557841236],
  [2.0, 100, 0.04821217873113364],
  [3.5, 100, 0.0006964277173562679],
  [6.0, 100, 3.17249150280286e-8],
  [12.0, 100, 4.3950877156043564e-21],
  [40.0, 100, 2.4621076021400736e-63],
  [0.001, 198, 0.9992031223626683],
  [0.5, 198, 0.6176303002110998],
  [1.0, 198, 0.31853103790873505],
  [2.0, 198, 0.046866883601488274],
  [3.5, 198, 0.0005747073788763344],
  [6.0, 198, 9.24223326066386e-9],
  [12.0, 198, 2.7493092110675606e-25],
  [40.0, 198, 8.390743454365986e-97],
];

// [x, a, b, I_x(a, b)]
const BETA: [number, number, number, number][] = [
  [0.3, 0.5, 0.5, 0.36901011956554536],
  [0.9, 2.5, 0.5, 0.48958974456442755],
  [0.2, 10, 3, 4.526080000000003e-6],
  [0.99, 50, 0.5, 0.3173043978741973],
  [0.05, 0.7, 4, 0.3268452108740289],
  [0.5, 3, 3, 0.5],
  [0.6, 99, 0.5, 9.678408974643696e-24],
];

// [x, ln Γ(x)]
const LOG_GAMMA: [number, number][] = [
  [0.1, 2.252712651734206],
  [0.5, 0.5723649429247],
  [1, 0.0],
  [1.5, -0.12078223763524526],
  [2.5, 0.2846828704729192],
  [10, 12.801827480081469],
  [25.5, 56.38916764371994],
  [99, 354.5390855194408],
  [1000.5, 5908.674175848678],
];

function relErr(actual: number, expected: number): number {
  if (expected === 0) return Math.abs(actual);
  return Math.abs(actual - expected) / Math.abs(expected);
}

describe('student-t', () => {
  it('gives scipy’s two-sided Student t p-values to 1e-12 relative', () => {
    for (const [t, df, p] of TWO_SIDED) {
      expect(relErr(studentTTwoSidedP(t, df), p), `t=${t} df=${df}`).toBeLessThan(1e-12);
      expect(relErr(studentTTwoSidedP(-t, df), p), `t=${-t} df=${df}`).toBeLessThan(1e-12);
    }
  });

  it('gives scipy’s regularized incomplete beta to 1e-12 relative', () => {
    for (const [x, a, b, want] of BETA) {
      expect(relErr(regularizedIncompleteBeta(x, a, b), want), `I_${x}(${a}, ${b})`).toBeLessThan(1e-12);
    }
  });

  it('gives scipy’s ln Γ to 1e-13 absolute or relative', () => {
    for (const [x, want] of LOG_GAMMA) {
      const got = logGamma(x);
      expect(Math.min(Math.abs(got - want), relErr(got, want)), `lnΓ(${x})`).toBeLessThan(1e-13);
    }
  });

  it('handles the edge cases as scipy does', () => {
    expect(studentTTwoSidedP(0, 7)).toBe(1);
    expect(studentTTwoSidedP(Number.POSITIVE_INFINITY, 7)).toBe(0);
    expect(studentTTwoSidedP(Number.NaN, 7)).toBeNaN();
    // Two constant samples at the same level: 0 / 0, no verdict (scipy gives NaN).
    expect(pooledTTest(5, 0, 4, 5, 0, 3).pValue).toBeNaN();
    // Two constant samples at different levels: infinitely significant.
    expect(pooledTTest(5, 0, 4, 6, 0, 3).pValue).toBe(0);
  });

  it('computes the pooled t statistic of scipy.stats.ttest_ind_from_stats', () => {
    // scipy.stats.ttest_ind_from_stats(10, 2, 8, 12, 3, 6) -> t=-1.5014669930156508, p=0.1590827236623918
    const r = pooledTTest(10, 2, 8, 12, 3, 6);
    expect(r.df).toBe(12);
    expect(relErr(r.t, -1.5014669930156508)).toBeLessThan(1e-14);
    expect(relErr(r.pValue, 0.1590827236623918)).toBeLessThan(1e-12);
  });
});
