/**
 * The merging t-digest exactly as `vegeta report` runs it: influxdata/tdigest v0.0.1 with
 * compression 100, every latency added with weight 1 in file order. vegeta's p50/p90/p95/p99 are
 * this estimator's quantiles, not order statistics, so reproducing it (same buffer sizes, same
 * merge rule, same arcsine scale function, same interpolation) is the only way to agree with the
 * report the user already saw. Written from the algorithm's definition; no code copied.
 *
 * Known gap: Go sorts the buffer with an unstable sort, so centroids with *exactly* equal means may
 * be merged in a different order here. Unit-weight duplicates are interchangeable, so this only
 * matters when an already-merged centroid's mean equals a new sample to the last bit.
 */
export class VegetaTDigest {
  readonly compression: number;
  private readonly maxProcessed: number;
  private readonly maxUnprocessed: number;

  // processed centroids, sorted by mean
  private pMean: Float64Array;
  private pWeight: Float64Array;
  private pLen = 0;
  private cumulative: Float64Array;

  // raw samples not yet merged (all weight 1 in vegeta's use)
  private uMean: Float64Array;
  private uLen = 0;

  // scratch for the merge of both lists
  private mMean: Float64Array;
  private mWeight: Float64Array;

  private processedWeight = 0;
  private unprocessedWeight = 0;
  private min = Number.MAX_VALUE;
  private max = -Number.MAX_VALUE;

  constructor(compression = 100) {
    this.compression = compression;
    this.maxProcessed = 2 * Math.ceil(compression);
    this.maxUnprocessed = 8 * Math.ceil(compression);
    this.pMean = new Float64Array(this.maxProcessed + 16);
    this.pWeight = new Float64Array(this.maxProcessed + 16);
    this.cumulative = new Float64Array(this.maxProcessed + 17);
    this.uMean = new Float64Array(this.maxUnprocessed + 1);
    this.mMean = new Float64Array(this.maxUnprocessed + this.maxProcessed + 32);
    this.mWeight = new Float64Array(this.maxUnprocessed + this.maxProcessed + 32);
  }

  /** Adds one sample with weight 1 (NaN is ignored, as the Go code does). */
  add(x: number): void {
    if (Number.isNaN(x)) return;
    this.uMean[this.uLen++] = x;
    this.unprocessedWeight += 1;
    // the Go code tests the sizes after appending
    if (this.pLen > this.maxProcessed || this.uLen > this.maxUnprocessed) this.process();
  }

  private integratedQ(k: number): number {
    return (Math.sin((Math.min(k, this.compression) * Math.PI) / this.compression - Math.PI / 2) + 1) / 2;
  }

  private integratedLocation(q: number): number {
    return (this.compression * (Math.asin(2 * q - 1) + Math.PI / 2)) / Math.PI;
  }

  private process(): void {
    if (this.uLen === 0 && this.pLen <= this.maxProcessed) return;
    // 1. sorted union of processed centroids and raw samples (raw part sorted natively, then merged)
    const raw = this.uMean.subarray(0, this.uLen);
    raw.sort();
    const total = this.uLen + this.pLen;
    if (this.mMean.length < total) {
      this.mMean = new Float64Array(total * 2);
      this.mWeight = new Float64Array(total * 2);
    }
    const mm = this.mMean;
    const mw = this.mWeight;
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.uLen && j < this.pLen) {
      if (raw[i]! < this.pMean[j]!) {
        mm[k] = raw[i++]!;
        mw[k++] = 1;
      } else {
        mm[k] = this.pMean[j]!;
        mw[k++] = this.pWeight[j++]!;
      }
    }
    while (i < this.uLen) {
      mm[k] = raw[i++]!;
      mw[k++] = 1;
    }
    while (j < this.pLen) {
      mm[k] = this.pMean[j]!;
      mw[k++] = this.pWeight[j++]!;
    }

    // 2. rebuild the processed list, merging neighbours while the k-scale allows it
    this.pLen = 0;
    this.pushProcessed(mm[0]!, mw[0]!);
    this.processedWeight += this.unprocessedWeight;
    this.unprocessedWeight = 0;
    let soFar = mw[0]!;
    let limit = this.processedWeight * this.integratedQ(1.0);
    for (let c = 1; c < total; c++) {
      const w = mw[c]!;
      const projected = soFar + w;
      if (projected <= limit) {
        soFar = projected;
        // Centroid.Add: weight first, then move the mean toward the newcomer
        const last = this.pLen - 1;
        const cw = this.pWeight[last]!;
        if (cw !== 0) {
          const nw = cw + w;
          this.pWeight[last] = nw;
          this.pMean[last] = this.pMean[last]! + (w * (mm[c]! - this.pMean[last]!)) / nw;
        } else {
          this.pWeight[last] = w;
          this.pMean[last] = mm[c]!;
        }
      } else {
        const k1 = this.integratedLocation(soFar / this.processedWeight);
        limit = this.processedWeight * this.integratedQ(k1 + 1.0);
        soFar += w;
        this.pushProcessed(mm[c]!, w);
      }
    }
    this.min = Math.min(this.min, this.pMean[0]!);
    this.max = Math.max(this.max, this.pMean[this.pLen - 1]!);
    this.updateCumulative();
    this.uLen = 0;
  }

  private pushProcessed(mean: number, weight: number): void {
    if (this.pLen === this.pMean.length) {
      const m = new Float64Array(this.pMean.length * 2);
      m.set(this.pMean);
      this.pMean = m;
      const w = new Float64Array(this.pWeight.length * 2);
      w.set(this.pWeight);
      this.pWeight = w;
    }
    this.pMean[this.pLen] = mean;
    this.pWeight[this.pLen++] = weight;
  }

  private updateCumulative(): void {
    if (this.cumulative.length < this.pLen + 1) this.cumulative = new Float64Array((this.pLen + 1) * 2);
    let prev = 0;
    for (let i = 0; i < this.pLen; i++) {
      const cur = this.pWeight[i]!;
      this.cumulative[i] = prev + cur / 2.0;
      prev = prev + cur;
    }
    this.cumulative[this.pLen] = prev;
  }

  /** Quantile q in 0..1, as the Go code computes it; NaN when empty or q is out of range. */
  quantile(q: number): number {
    this.process();
    if (q < 0 || q > 1 || this.pLen === 0) return NaN;
    const pm = this.pMean;
    const pw = this.pWeight;
    if (this.pLen === 1) return pm[0]!;
    const index = q * this.processedWeight;
    if (index <= pw[0]! / 2.0) return this.min + ((2.0 * index) / pw[0]!) * (pm[0]! - this.min);

    // first cumulative entry >= index (binary search over pLen + 1 entries)
    const cumLen = this.pLen + 1;
    let lo = 0;
    let hi = cumLen;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! >= index) hi = mid;
      else lo = mid + 1;
    }
    const lower = lo;
    if (lower + 1 !== cumLen) {
      const z1 = index - this.cumulative[lower - 1]!;
      const z2 = this.cumulative[lower]! - index;
      return weightedAverage(pm[lower - 1]!, z2, pm[lower]!, z1);
    }
    const z1 = index - this.processedWeight - pw[lower - 1]! / 2.0;
    const z2 = pw[lower - 1]! / 2.0 - z1;
    return weightedAverage(pm[this.pLen - 1]!, z1, this.max, z2);
  }
}

function weightedAverage(x1: number, w1: number, x2: number, w2: number): number {
  if (x1 <= x2) return weightedAverageSorted(x1, w1, x2, w2);
  return weightedAverageSorted(x2, w2, x1, w1);
}

function weightedAverageSorted(x1: number, w1: number, x2: number, w2: number): number {
  const x = (x1 * w1 + x2 * w2) / (w1 + w2);
  return Math.max(x1, Math.min(x, x2));
}
