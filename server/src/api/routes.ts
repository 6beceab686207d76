/**
 * Every endpoint's method and path, by name: the one list the server registers, the web client and the
 * CLI call, and the tests walk. Plain data (no schema library), so the browser bundle can import it.
 * The schemas of each endpoint are in endpoints.ts under the same name.
 */
export const ENDPOINT_ROUTES = {
  createComparison: { method: 'POST', path: '/api/comparisons' },
  getComparison: { method: 'GET', path: '/api/comparisons/:id' },
  patchComparison: { method: 'PATCH', path: '/api/comparisons/:id' },
  deleteComparison: { method: 'DELETE', path: '/api/comparisons/:id' },
  checkEditToken: { method: 'POST', path: '/api/comparisons/:id/token-check' },
  createStage: { method: 'POST', path: '/api/comparisons/:id/stages' },
  patchStage: { method: 'PATCH', path: '/api/comparisons/:id/stages/:stageId' },
  deleteStage: { method: 'DELETE', path: '/api/comparisons/:id/stages/:stageId' },
  orderStages: { method: 'PUT', path: '/api/comparisons/:id/stages/order' },
  addCapture: { method: 'POST', path: '/api/comparisons/:id/stages/:stageId/captures' },
  uploadArtifacts: { method: 'POST', path: '/api/comparisons/:id/stages/:stageId/artifacts' },
  importFromProfiler: { method: 'POST', path: '/api/comparisons/:id/stages/:stageId/import' },
  rawArtifact: { method: 'GET', path: '/api/artifacts/:artifactId/raw' },
  deleteArtifact: { method: 'DELETE', path: '/api/comparisons/:id/artifacts/:artifactId' },
  putStageSources: { method: 'PUT', path: '/api/comparisons/:id/stages/:stageId/sources' },
  getStageSources: { method: 'GET', path: '/api/comparisons/:id/stages/:stageId/sources' },
  deleteStageSources: { method: 'DELETE', path: '/api/comparisons/:id/stages/:stageId/sources' },
  checkFilters: { method: 'GET', path: '/api/filters/check' },
  stageTable: { method: 'GET', path: '/api/comparisons/:id/stage-table' },
  changes: { method: 'GET', path: '/api/comparisons/:id/changes' },
  flamegraph: { method: 'GET', path: '/api/comparisons/:id/flamegraph' },
  diff: { method: 'GET', path: '/api/comparisons/:id/diff' },
  source: { method: 'GET', path: '/api/comparisons/:id/source' },
  top: { method: 'GET', path: '/api/comparisons/:id/top' },
  trajectory: { method: 'GET', path: '/api/comparisons/:id/trajectory' },
  sandwich: { method: 'GET', path: '/api/comparisons/:id/sandwich' },
  search: { method: 'GET', path: '/api/comparisons/:id/search' },
  timeline: { method: 'GET', path: '/api/comparisons/:id/timeline' },
  folded: { method: 'GET', path: '/api/comparisons/:id/folded' },
  benchmarks: { method: 'GET', path: '/api/comparisons/:id/benchmarks' },
  gc: { method: 'GET', path: '/api/comparisons/:id/gc' },
  runtime: { method: 'GET', path: '/api/comparisons/:id/runtime' },
  requests: { method: 'GET', path: '/api/comparisons/:id/requests' },
  flamegraphSvg: { method: 'GET', path: '/api/comparisons/:id/flamegraph.svg' },
  flamegraphPng: { method: 'GET', path: '/api/comparisons/:id/flamegraph.png' },
  diffSvg: { method: 'GET', path: '/api/comparisons/:id/diff.svg' },
  diffPng: { method: 'GET', path: '/api/comparisons/:id/diff.png' },
  stageProfile: { method: 'GET', path: '/api/comparisons/:id/stages/:stageId/profile.pb.gz' },
  stagePgo: { method: 'GET', path: '/api/comparisons/:id/stages/:stageId/default.pgo' },
  diffProfile: { method: 'GET', path: '/api/comparisons/:id/diff.pb.gz' },
} as const;

export type EndpointName = keyof typeof ENDPOINT_ROUTES;

type QueryValue = string | number | boolean | null | undefined | readonly string[];

/**
 * The URL of an endpoint: path parameters filled in (encoded), the query's defined, non-empty values
 * appended (an array repeats its key), in the order given.
 */
export function endpointUrl(
  name: EndpointName,
  params: Record<string, string> = {},
  query: Record<string, QueryValue> = {},
): string {
  const path = ENDPOINT_ROUTES[name].path.replace(/:([A-Za-z]+)/g, (_m, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`${name}: missing path parameter ${k}`);
    return encodeURIComponent(v);
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, x);
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
