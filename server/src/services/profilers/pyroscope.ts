import protobuf from 'protobufjs';
import { type Fetcher, ProfilerError, profilerFailure } from './guarded-fetch.ts';

/**
 * Pyroscope's querier over the Connect protocol, binary (`application/proto`):
 * `querier.v1.QuerierService/ProfileTypes` answers the profile types it holds in a window
 * (types.v1.ProfileType), `SelectMergeProfile` a google.v1.Profile, which is pprof's profile.proto
 * (so its bytes are a pprof profile as they come), and `SelectSeries` the series of a profile type
 * (types.v1.Series: labels, points of value and timestamp in ms). Field numbers are those of
 * github.com/grafana/pyroscope/api v1.6.0 (querier/v1/querier.proto, types/v1/types.proto).
 */

const SERVICE = 'querier.v1.QuerierService';

/** SelectMergeProfileRequest / SelectSeriesRequest: profile_typeID 1, label_selector 2, start 3, end 4 (ms), step 6 (s). */
function request(profileType: string, selector: string, fromMs: number, toMs: number, stepSeconds?: number): Buffer {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).string(profileType);
  w.uint32((2 << 3) | 2).string(selector);
  w.uint32(3 << 3).int64(fromMs);
  w.uint32(4 << 3).int64(toMs);
  if (stepSeconds !== undefined) w.uint32((6 << 3) | 1).double(stepSeconds);
  return Buffer.from(w.finish());
}

async function call(fetch: Fetcher, base: URL, method: string, body: Buffer): Promise<Buffer> {
  const u = new URL(base.href);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/${SERVICE}/${method}`;
  u.search = '';
  u.hash = '';
  const a = await fetch(u, { body, contentType: 'application/proto' });
  if (a.status !== 200) throw profilerFailure(a, 'Pyroscope', method);
  return a.body;
}

/** A reader on each embedded message of field `field` of a message, other fields skipped. */
function* embedded(body: Uint8Array, field: number): Generator<protobuf.Reader> {
  const r = protobuf.Reader.create(body);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === field && (tag & 7) === 2) yield protobuf.Reader.create(r.bytes());
    else r.skipType(tag & 7);
  }
}

/** One of Pyroscope's profile types: ID `<name>:<sample type>:<sample unit>:<period type>:<period unit>`. */
export interface PyroscopeType {
  id: string;
  name: string;
  sampleType: string;
  sampleUnit: string;
  periodType: string;
  periodUnit: string;
}

/**
 * The profile types Pyroscope holds between fromMs and toMs (ProfileTypesRequest: start 1, end 2;
 * ProfileTypesResponse: profile_types 1; ProfileType: ID 1, name 2, sample_type 4, sample_unit 5,
 * period_type 6, period_unit 7). They are every service's: the request takes no selector.
 */
export async function pyroscopeTypes(
  fetch: Fetcher,
  base: URL,
  fromMs: number,
  toMs: number,
): Promise<PyroscopeType[]> {
  const w = protobuf.Writer.create();
  w.uint32(1 << 3).int64(fromMs);
  w.uint32(2 << 3).int64(toMs);
  const body = await call(fetch, base, 'ProfileTypes', Buffer.from(w.finish()));
  const out: PyroscopeType[] = [];
  try {
    for (const t of embedded(body, 1)) {
      const pt: PyroscopeType = { id: '', name: '', sampleType: '', sampleUnit: '', periodType: '', periodUnit: '' };
      const fields: Record<number, keyof PyroscopeType> = {
        1: 'id',
        2: 'name',
        4: 'sampleType',
        5: 'sampleUnit',
        6: 'periodType',
        7: 'periodUnit',
      };
      while (t.pos < t.len) {
        const tt = t.uint32();
        const f = fields[tt >>> 3];
        if (f && (tt & 7) === 2) pt[f] = t.string().slice(0, 300);
        else t.skipType(tt & 7);
      }
      if (pt.id !== '') out.push(pt);
      if (out.length > 10_000) break;
    }
  } catch (e) {
    throw new ProfilerError(
      502,
      'profiler-failed',
      `Pyroscope's ProfileTypes answer is not a ProfileTypesResponse: ${(e as Error).message}`,
    );
  }
  return out;
}

/** The profiles of a type and selector whose time lies in [fromMs, toMs], merged by Pyroscope (pprof bytes). */
export async function pyroscopeMerge(
  fetch: Fetcher,
  base: URL,
  profileType: string,
  selector: string,
  fromMs: number,
  toMs: number,
): Promise<Buffer> {
  return call(fetch, base, 'SelectMergeProfile', request(profileType, selector, fromMs, toMs));
}

export interface SeriesPoint {
  series: string;
  timestampMs: number;
  value: number;
}

/** The points of a type's series in [fromMs, toMs] at a step of `stepSeconds`. */
export async function pyroscopeSeries(
  fetch: Fetcher,
  base: URL,
  profileType: string,
  selector: string,
  fromMs: number,
  toMs: number,
  stepSeconds: number,
): Promise<SeriesPoint[]> {
  const body = await call(fetch, base, 'SelectSeries', request(profileType, selector, fromMs, toMs, stepSeconds));
  const out: SeriesPoint[] = [];
  try {
    for (const s of embedded(body, 1)) {
      const labels: string[] = [];
      const points: { t: number; v: number }[] = [];
      while (s.pos < s.len) {
        const st = s.uint32();
        if (st >>> 3 === 1 && (st & 7) === 2) {
          const l = protobuf.Reader.create(s.bytes());
          let name = '';
          let value = '';
          while (l.pos < l.len) {
            const lt = l.uint32();
            if (lt >>> 3 === 1) name = l.string();
            else if (lt >>> 3 === 2) value = l.string();
            else l.skipType(lt & 7);
          }
          labels.push(`${name}=${value}`);
        } else if (st >>> 3 === 2 && (st & 7) === 2) {
          const p = protobuf.Reader.create(s.bytes());
          let v = 0;
          let t = 0;
          while (p.pos < p.len) {
            const pt = p.uint32();
            if (pt >>> 3 === 1 && (pt & 7) === 1) v = p.double();
            else if (pt >>> 3 === 2 && (pt & 7) === 0) t = Number(p.int64());
            else p.skipType(pt & 7);
          }
          points.push({ t, v });
        } else s.skipType(st & 7);
      }
      const series = labels.sort().join(',');
      for (const p of points) out.push({ series, timestampMs: p.t, value: p.v });
    }
  } catch (e) {
    throw new ProfilerError(
      502,
      'profiler-failed',
      `Pyroscope's SelectSeries answer is not a SelectSeriesResponse: ${(e as Error).message}`,
    );
  }
  return out.sort((a, b) => a.timestampMs - b.timestampMs);
}
