/*
 * Student's t distribution and the pooled-variance two-sample t-test, accurate to about 1e-13 relative.
 *
 * The tail of t with ν degrees of freedom is a regularized incomplete beta function:
 *   P(|T| ≥ t) = I_x(ν/2, 1/2) with x = ν / (ν + t²),
 * which is evaluated by its continued fraction (modified Lentz). 1 − x = t² / (ν + t²) is formed
 * directly rather than by subtraction, so small and large t both keep their precision.
 */

// Lanczos approximation (g = 7, 9 terms) of Γ; relative error near 1e-15 for positive arguments.
const LANCZOS_G = 7;
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/** ln Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) {
    // Reflection keeps the series in its accurate range: Γ(x) Γ(1 − x) = π / sin(πx).
    return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  }
  const z = x - 1;
  let sum = LANCZOS[0] as number;
  for (let i = 1; i < LANCZOS.length; i++) sum += (LANCZOS[i] as number) / (z + i);
  const t = z + LANCZOS_G + 0.5;
  return HALF_LOG_TWO_PI + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

function logBeta(a: number, b: number): number {
  return logGamma(a) + logGamma(b) - logGamma(a + b);
}

const TINY = 1e-300;
const EPS = 1e-16;
const MAX_TERMS = 10_000;

/** The continued fraction of I_x(a, b) · a / (x^a (1−x)^b / B(a, b)), by the modified Lentz method. */
function betaFraction(x: number, a: number, b: number): number {
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let f = d;
  for (let m = 1; m <= MAX_TERMS; m++) {
    const m2 = 2 * m;
    // Even step: m (b − m) x / ((a + 2m − 1)(a + 2m)).
    let coef = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + coef * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + coef / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    f *= d * c;
    // Odd step: −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    coef = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + coef * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + coef / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    f *= delta;
    if (Math.abs(delta - 1) < EPS) return f;
  }
  return f;
}

/**
 * The regularized incomplete beta function I_x(a, b), given x and y = 1 − x separately (the caller may
 * know y more precisely than 1 − x can be computed).
 */
function incompleteBeta(x: number, y: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const logFront = a * Math.log(x) + b * Math.log(y) - logBeta(a, b);
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(logFront) * betaFraction(x, a, b)) / a;
  return 1 - (Math.exp(logFront) * betaFraction(y, b, a)) / b;
}

/** The regularized incomplete beta function I_x(a, b) for 0 ≤ x ≤ 1, a, b > 0. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  return incompleteBeta(x, 1 - x, a, b);
}

/** P(|T| ≥ |t|) for Student's t with `df` degrees of freedom (NaN for NaN t, 0 for infinite t). */
export function studentTTwoSidedP(t: number, df: number): number {
  if (Number.isNaN(t) || Number.isNaN(df)) return Number.NaN;
  const t2 = t * t;
  if (!Number.isFinite(t2)) return 0;
  if (t2 === 0) return 1;
  const x = df / (df + t2);
  const y = t2 / (df + t2);
  return Math.min(1, incompleteBeta(x, y, df / 2, 0.5));
}

export interface TTestResult {
  t: number;
  df: number;
  pValue: number;
}

/**
 * Two-sided pooled-variance (Student) t-test from summary statistics, as scipy's
 * `ttest_ind_from_stats(..., equal_var=True)` defines it: `sd1`, `sd2` are used as given (a sample of one
 * contributes no variance), df = n1 + n2 − 2.
 */
export function pooledTTest(
  mean1: number,
  sd1: number,
  n1: number,
  mean2: number,
  sd2: number,
  n2: number,
): TTestResult {
  const v1 = n1 === 1 ? 0 : sd1 * sd1;
  const v2 = n2 === 1 ? 0 : sd2 * sd2;
  const df = n1 + n2 - 2;
  const pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / df;
  const denom = Math.sqrt(pooled * (1 / n1 + 1 / n2));
  const t = (mean1 - mean2) / denom;
  return { t, df, pValue: studentTTwoSidedP(t, df) };
}
