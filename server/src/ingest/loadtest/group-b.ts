/**
 * The group-B load-test importers: vegeta, k6, Locust, JMeter and ghz. Each detects its files by
 * content (the name is only a hint) and parses them into the canonical `LoadTestRun`.
 */
import { ghzImporters } from './ghz.ts';
import { jmeterImporters } from './jmeter.ts';
import { k6Importers } from './k6.ts';
import { locustImporters } from './locust.ts';
import type { LoadTestImporter } from './types.ts';
import { vegetaImporters } from './vegeta.ts';

export const importersB: LoadTestImporter[] = [
  ...vegetaImporters,
  ...k6Importers,
  ...jmeterImporters,
  ...locustImporters,
  ...ghzImporters,
];
