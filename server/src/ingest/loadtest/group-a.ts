/**
 * The group-A load-test importers: wrk, wrk2, hey (text and -o csv), ab (text, -g, -e),
 * bombardier (JSON and text) and autocannon (--json and tables). Detection wiring imports this
 * list and picks the importer whose `detect` is the most confident.
 */
import type { LoadTestImporter } from './types.ts';
import { wrkImporter } from './wrk.ts';
import { wrk2Importer } from './wrk2.ts';
import { heyImporter } from './hey.ts';
import { abImporter } from './ab.ts';
import { bombardierImporter } from './bombardier.ts';
import { autocannonImporter } from './autocannon.ts';

export const importersA: LoadTestImporter[] = [
  wrkImporter,
  wrk2Importer,
  heyImporter,
  abImporter,
  bombardierImporter,
  autocannonImporter,
];
