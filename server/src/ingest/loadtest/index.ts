/**
 * Every load-test importer, in one list. Detection (`../detect.ts`, through `../importers.ts`) asks each for its confidence
 * on a file's head and picks the most confident, so the order here only breaks exact ties.
 */
import { abImporter } from './ab.ts';
import { autocannonImporter } from './autocannon.ts';
import { bombardierImporter } from './bombardier.ts';
import { ghzImporters } from './ghz.ts';
import { ohaImporter } from './oha.ts';
import { prometheusImporter } from './prometheus.ts';
import { heyImporter } from './hey.ts';
import { jmeterImporters } from './jmeter.ts';
import { k6Importers } from './k6.ts';
import { locustImporters } from './locust.ts';
import type { LoadTestImporter } from './types.ts';
import { vegetaImporters } from './vegeta.ts';
import { wrkImporter } from './wrk.ts';
import { wrk2Importer } from './wrk2.ts';

export const loadTestImporters: readonly LoadTestImporter[] = [
  wrkImporter,
  wrk2Importer,
  heyImporter,
  abImporter,
  bombardierImporter,
  autocannonImporter,
  ...vegetaImporters,
  ...k6Importers,
  ...jmeterImporters,
  ...locustImporters,
  ...ghzImporters,
  ohaImporter,
  prometheusImporter,
];
